# Sourced by the end-to-end tests: keep_failed DIR copies the work directory of a test that
# had a failed check to $AUXCAP_KEEP_FAILED (meson sets it to the build's meson-logs) and says
# where, so an intermittent failure leaves its captures to look at.  Needs $fails.
keep_failed() {
	local dest
	[ "${fails:-0}" -gt 0 ] && [ -d "$1" ] || return 0
	dest="${AUXCAP_KEEP_FAILED:-/tmp}/failed-$(basename "$0" .sh)-$$"
	mkdir -p "$dest" && cp -a "$1/." "$dest/" 2>/dev/null
	echo "# work directory kept in $dest"
}
