/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the files of aux/intel_pt/ (which alone include <intel-pt.h>). */
#ifndef AUXCAP_IPT_INTERNAL_H
#define AUXCAP_IPT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <intel-pt.h>

#include "ipt.h"

/*
 * The trace [@buf, @buf + @len) for libipt, with its end readable: libipt (2.0.5 to 2.1)
 * reads the byte just past the trace when the trace's last 8-byte word is PSB payload
 * (pt_find_psb(), on every sync_forward that reaches it).  Where that byte may not be mapped
 * (the trace ends on a page boundary: the end of a file's mapping, of a buffer) the trace is
 * copied with a zero byte after it.  Returns @buf, or the copy (then *@ret_owned is it, for
 * the caller to free; else NULL), or NULL if out of memory (with @len > 0).
 */
const uint8_t *auxcap_ipt_readable_end(const uint8_t *buf, size_t len, void **ret_owned);

/*
 * Fill @config for the trace [@buf, @buf + @len) and @params (optional).  Errata come from
 * auxcap_ipt_errata(); an unknown CPU leaves them empty.  Returns 0 or a negative libipt code.
 */
int auxcap_ipt_config_init(struct pt_config *config, const uint8_t *buf, size_t len,
			   const struct auxcap_ipt_params *params);

/* Errata of @params' CPU into @errata; 0, or -pte_bad_cpu if the CPU is not known. */
int auxcap_ipt_errata(const struct auxcap_ipt_params *params, struct pt_errata *errata);

/* -EINVAL if @params is non-NULL with a too small sz. */
int auxcap_ipt_params_valid(const struct auxcap_ipt_params *params);

/* The libipt image behind @image (borrowed). */
struct pt_image *auxcap_ipt_image_pt(struct auxcap_ipt_image *image);

/*
 * Read up to @len bytes at @vaddr from section @isid of @image.  Returns the number of
 * bytes read or a negative libipt code.
 */
int auxcap_ipt_image_read(struct auxcap_ipt_image *image, int isid, uint64_t vaddr, uint8_t *buf,
			  size_t len);

/*
 * Start @dec over at the PSB at @start (> 0), as a new decoder with opts.start = @start would,
 * keeping what it has cached (libipt's decoder, the bytes at block ends).  Returns 0, or
 * -EINVAL if @start is 0 or not inside the trace.
 */
int auxcap_ipt_decoder_restart(struct auxcap_ipt_decoder *dec, uint64_t start);

#endif
