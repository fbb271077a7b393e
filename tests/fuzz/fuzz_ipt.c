/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the Intel PT decode pipeline of aux/intel_pt (libipt adapter): the packet
 * listing (auxcap_ipt_dump) and the instruction or block flow (auxcap_ipt_decoder_*) over a
 * small raw code image.
 *
 * Input layout (the seeds are Intel's libipt test vectors in it, tests/fuzz/make-seeds):
 *
 *	byte 0     flags: 0x01 block decoder, 0x02 tick events, 0x04 image at 0x1000 (else
 *	           0x100000, the two "org" addresses of the test vectors), 0x08 CPU 6/<byte 1>
 *	           (errata), 0x10 dump --no-sync, 0x20 --lastip, 0x40 --exec-mode, 0x80 --raw
 *	byte 1     CPU model with flag 0x08
 *	byte 2     mtc_freq (low nibble), nom_freq (high nibble)
 *	bytes 3-4  little-endian length L of the image (at most 4096)
 *	L bytes    the code image
 *	the rest   the Intel PT packet stream
 *
 * Checked: the listing never fails on bad trace (errors are lines) and every line is a
 * string; every flow item has a known kind, a trace offset inside the trace, sane sizes; a
 * GAP carries a negative errno; the gap count matches the GAP items; decoding ends.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "ipt.h"

#define MAX_IMAGE 4096
#define MAX_TRACE (256 * 1024)

static int g_memfd = -1;
static char g_path[64];
/* MAX_TRACE bytes followed by a page that cannot be read: the trace is copied to its end, so
 * that libipt (not built with the sanitizers) reading past the trace faults in every build. */
static uint8_t *g_guarded;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (g_memfd >= 0)
		return 0;
	g_memfd = memfd_create("fuzz-ipt-image", MFD_CLOEXEC);
	if (g_memfd < 0) {
		perror("memfd_create");
		abort();
	}
	snprintf(g_path, sizeof(g_path), "/proc/self/fd/%d", g_memfd);
	g_guarded = mmap(NULL, MAX_TRACE + 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g_guarded == MAP_FAILED || mprotect(g_guarded + MAX_TRACE, 4096, PROT_NONE) < 0) {
		perror("fuzz-ipt: guard page");
		abort();
	}
	return 0;
}

static int on_line(void *ctx, const char *line)
{
	size_t *lines = ctx;

	FUZZ_CHECK(line);
	fuzz_strlen(line);
	(*lines)++;
	return 0;
}

static void check_item(const struct auxcap_ipt_item *it, size_t trace_len)
{
	FUZZ_CHECK(it->kind >= AUXCAP_IPT_ITEM_INSN && it->kind <= AUXCAP_IPT_ITEM_GAP);
	FUZZ_CHECK(it->offset <= trace_len);
	switch (it->kind) {
	case AUXCAP_IPT_ITEM_INSN:
		FUZZ_CHECK(it->ninsn == 1 && it->size >= 1 && it->size <= 15);
		break;
	case AUXCAP_IPT_ITEM_BLOCK:
		FUZZ_CHECK(it->ninsn >= 1 && it->size <= 15);
		break;
	case AUXCAP_IPT_ITEM_EVENT:
		FUZZ_CHECK(it->event >= AUXCAP_IPT_EV_ENABLED &&
			   it->event <= AUXCAP_IPT_EV_END_OF_TRACE);
		break;
	case AUXCAP_IPT_ITEM_GAP:
		FUZZ_CHECK(it->err < 0);
		fuzz_strlen(auxcap_ipt_strerror(it->native));
		break;
	}
}

static void decode(const uint8_t *trace, size_t len, struct auxcap_ipt_image *image,
		   const struct auxcap_ipt_params *params, bool block, bool ticks)
{
	/* A low stall limit keeps inputs that loop without trace fast (the default, 2^20, is
	 * tested by aux/intel_pt/ipt_robust). */
	struct auxcap_ipt_decoder_opts o = { .sz = sizeof(o), .block = block, .tick_events = ticks,
					     .max_stalled_insns = 4096 };
	struct auxcap_ipt_decoder *dec;
	struct auxcap_ipt_item it;
	uint64_t gaps = 0;
	int r;

	r = auxcap_ipt_decoder_new(trace, len, image, params, &o, &dec);
	if (r < 0) {
		FUZZ_CHECK(r == -ENOMEM || r == -EINVAL);
		return;
	}
	while ((r = auxcap_ipt_decoder_next(dec, &it)) == 1) {
		check_item(&it, len);
		gaps += it.kind == AUXCAP_IPT_ITEM_GAP;
	}
	FUZZ_CHECK(r == 0 || r == -ENOMEM);
	FUZZ_CHECK(auxcap_ipt_decoder_gaps(dec) == gaps);
	/* At the end it stays at the end. */
	FUZZ_CHECK(r < 0 || auxcap_ipt_decoder_next(dec, &it) == 0);
	auxcap_ipt_decoder_free(dec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct auxcap_ipt_params params = { .sz = sizeof(params) };
	struct auxcap_ipt_dump_opts dopts = { .sz = sizeof(dopts) };
	struct auxcap_ipt_image *image = NULL;
	const uint8_t *code, *trace;
	size_t code_len, trace_len, lines = 0;
	uint8_t flags;
	int r;

	LLVMFuzzerInitialize(NULL, NULL);
	if (size < 5)
		return 0;
	flags = data[0];
	if (flags & 0x08) {
		params.cpu_set = true;
		params.cpu_family = 6;
		params.cpu_model = data[1];
	}
	params.mtc_freq = data[2] & 0x0f;
	params.nom_freq = data[2] >> 4;
	code_len = (size_t)data[3] | (size_t)data[4] << 8;
	if (code_len > MAX_IMAGE || code_len > size - 5)
		code_len = size - 5 < MAX_IMAGE ? size - 5 : MAX_IMAGE;
	code = data + 5;
	trace_len = size - 5 - code_len;
	if (trace_len > MAX_TRACE)
		return 0;
	trace = memcpy(g_guarded + MAX_TRACE - trace_len, code + code_len, trace_len);

	dopts.no_sync = flags & 0x10;
	dopts.lastip = flags & 0x20;
	dopts.exec_mode = flags & 0x40;
	dopts.raw = flags & 0x80;
	r = auxcap_ipt_dump(trace, trace_len, &params, &dopts, on_line, &lines);
	FUZZ_CHECK(r >= 0 || r == -ENOMEM);

	if (auxcap_ipt_image_new(&image) < 0)
		return 0;
	if (code_len) {
		if (ftruncate(g_memfd, 0) < 0 || pwrite(g_memfd, code, code_len, 0) != (ssize_t)code_len)
			abort();
		r = auxcap_ipt_image_add_raw(image, g_path, 0, 0, flags & 0x04 ? 0x1000 : 0x100000);
		FUZZ_CHECK(r == 0);
	}
	decode(trace, trace_len, image, &params, flags & 0x01, flags & 0x02);
	auxcap_ipt_image_free(image);
	return 0;
}
