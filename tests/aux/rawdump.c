/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap-rawdump: a small stand-alone driver of the raw SPE and BTS writers, for trying the
 * decoders on byte streams dumped by other tools until `auxcap decode --raw` is wired up.
 *
 *	auxcap-rawdump arm_spe FILE [packets|samples|both]
 *	auxcap-rawdump intel_bts FILE [padding|raw]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bts_decode.h"
#include "spe_decode.h"

static unsigned char *read_all(const char *path, size_t *ret_len)
{
	unsigned char *buf = NULL, *tmp;
	size_t len = 0, cap = 0, n;
	FILE *f = fopen(path, "rb");

	if (!f)
		return NULL;
	for (;;) {
		if (len == cap) {
			cap = cap ? 2 * cap : 65536;
			tmp = realloc(buf, cap);
			if (!tmp)
				goto fail;
			buf = tmp;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f))
		goto fail;
	fclose(f);
	*ret_len = len;
	return buf;
fail:
	free(buf);
	fclose(f);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 3 ? argv[3] : "both";
	unsigned char *buf;
	size_t len = 0;
	int err;

	if (argc < 3 || (strcmp(argv[1], "arm_spe") != 0 && strcmp(argv[1], "intel_bts") != 0)) {
		fprintf(stderr,
			"usage: %s arm_spe|intel_bts FILE [packets|samples|both|padding|raw]\n",
			argv[0]);
		return 1;
	}
	buf = read_all(argv[2], &len);
	if (!buf && errno) {
		fprintf(stderr, "%s: cannot read %s: %s\n", argv[0], argv[2], strerror(errno));
		return 1;
	}
	if (strcmp(argv[1], "arm_spe") == 0) {
		unsigned int flags = AUXCAP_SPE_DUMP_SUMMARY;

		if (strcmp(mode, "samples") != 0)
			flags |= AUXCAP_SPE_DUMP_PACKETS;
		if (strcmp(mode, "packets") != 0)
			flags |= AUXCAP_SPE_DUMP_SAMPLES;
		err = auxcap_spe_dump_raw(buf, len, stdout, flags, NULL);
	} else {
		unsigned int flags = AUXCAP_BTS_DUMP_SUMMARY;

		if (strcmp(mode, "padding") == 0)
			flags |= AUXCAP_BTS_DUMP_PADDING;
		if (strcmp(mode, "raw") == 0)
			flags |= AUXCAP_BTS_DUMP_RAW;
		err = auxcap_bts_dump_raw(buf, len, stdout, flags, NULL);
	}
	free(buf);
	if (err) {
		fprintf(stderr, "%s: writing the dump failed: %s\n", argv[0], strerror(-err));
		return 1;
	}
	return 0;
}
