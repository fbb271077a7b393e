/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Intel PT decode parameters: --cpu parsing, errata, the libipt configuration, and the
 * mapping of libipt error codes to errno.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "ipt.h"
#include "ipt_internal.h"

static int parse_u32(const char *s, char **end, uint32_t max, uint32_t *ret)
{
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, end, 0);
	if (errno || v > max)
		return -EINVAL;
	*ret = (uint32_t)v;
	return 0;
}

int auxcap_ipt_params_parse_cpu(struct auxcap_ipt_params *params, const char *s)
{
	uint32_t family, model, stepping = 0;
	char *end;
	int r;

	if (!params || !s)
		return -EINVAL;
	r = parse_u32(s, &end, 0xffff, &family);
	if (r < 0 || *end != '/')
		return -EINVAL;
	r = parse_u32(end + 1, &end, 0xff, &model);
	if (r < 0)
		return -EINVAL;
	if (*end == '/') {
		r = parse_u32(end + 1, &end, 0xff, &stepping);
		if (r < 0)
			return -EINVAL;
	}
	if (*end)
		return -EINVAL;
	params->cpu_set = true;
	params->cpu_family = (uint16_t)family;
	params->cpu_model = (uint8_t)model;
	params->cpu_stepping = (uint8_t)stepping;
	return 0;
}

/*
 * Models that libipt 2.0.5's table does not list, with the errata Intel's specification
 * updates give them (the groups are those of newer libipt releases; 6/213 and family 18
 * share the Alder Lake group, as the libipt test vectors for them expect).
 */
enum errata_set {
	ERR_SKX = 1, /* bdm70 skl014 skd022 skz84 */
	ERR_ICL,     /* bdm70 skl014 skd022 */
	ERR_ADL,     /* bdm70 skl014 skd022 apl11 */
	ERR_ATOM,    /* apl11 */
};

static const struct {
	uint16_t family;
	uint8_t model;
	enum errata_set set;
} extra_models[] = {
	{ 6, 0x8f, ERR_SKX },  { 6, 0xad, ERR_SKX },	{ 6, 0xae, ERR_SKX },
	{ 6, 0xcf, ERR_SKX },  { 0x13, 0x01, ERR_SKX }, { 6, 0x8c, ERR_ICL },
	{ 6, 0x8d, ERR_ICL },  { 6, 0xa7, ERR_ICL },	{ 6, 0xa8, ERR_ICL },
	{ 6, 0x97, ERR_ADL },  { 6, 0x9a, ERR_ADL },	{ 6, 0xbf, ERR_ADL },
	{ 6, 0xb7, ERR_ADL },  { 6, 0xb5, ERR_ADL },	{ 6, 0xaa, ERR_ADL },
	{ 6, 0xac, ERR_ADL },  { 6, 0xba, ERR_ADL },	{ 6, 0xcc, ERR_ADL },
	{ 6, 0xbd, ERR_ADL },  { 6, 0xc5, ERR_ADL },	{ 6, 0xc6, ERR_ADL },
	{ 6, 0xd5, ERR_ADL },  { 0x12, 0x01, ERR_ADL }, { 0x12, 0x03, ERR_ADL },
	{ 6, 0x96, ERR_ATOM }, { 6, 0x9c, ERR_ATOM },	{ 6, 0xb6, ERR_ATOM },
	{ 6, 0xaf, ERR_ATOM }, { 6, 0xdd, ERR_ATOM },
};

int auxcap_ipt_errata(const struct auxcap_ipt_params *params, struct pt_errata *errata)
{
	struct pt_cpu cpu = { .vendor = pcv_intel };
	int r;

	memset(errata, 0, sizeof(*errata));
	if (!params || !params->cpu_set)
		return 0;
	cpu.family = params->cpu_family;
	cpu.model = params->cpu_model;
	cpu.stepping = params->cpu_stepping;
	r = pt_cpu_errata(errata, &cpu);
	if (r >= 0)
		return 0;
	if (r != -pte_bad_cpu)
		return r;
	memset(errata, 0, sizeof(*errata));
	for (size_t i = 0; i < sizeof(extra_models) / sizeof(extra_models[0]); i++) {
		if (extra_models[i].family != cpu.family || extra_models[i].model != cpu.model)
			continue;
		switch (extra_models[i].set) {
		case ERR_SKX:
			errata->skz84 = 1;
			__attribute__((fallthrough));
		case ERR_ICL:
			errata->bdm70 = 1;
			errata->skl014 = 1;
			errata->skd022 = 1;
			break;
		case ERR_ADL:
			errata->bdm70 = 1;
			errata->skl014 = 1;
			errata->skd022 = 1;
			errata->apl11 = 1;
			break;
		case ERR_ATOM:
			errata->apl11 = 1;
			break;
		}
		return 0;
	}
	return -pte_bad_cpu;
}

int auxcap_ipt_params_check_cpu(const struct auxcap_ipt_params *params)
{
	struct pt_errata errata;

	if (!params)
		return -EINVAL;
	return auxcap_ipt_errno(auxcap_ipt_errata(params, &errata));
}

int auxcap_ipt_params_valid(const struct auxcap_ipt_params *params)
{
	if (params && params->sz < sizeof(*params))
		return -EINVAL;
	return 0;
}

const uint8_t *auxcap_ipt_readable_end(const uint8_t *buf, size_t len, void **ret_owned)
{
	uint8_t *copy;

	*ret_owned = NULL;
	if (!len || ((uintptr_t)(buf + len) & 4095))
		return buf; /* the byte after it is on the trace's last page */
	copy = malloc(len + 1);
	if (!copy)
		return NULL;
	memcpy(copy, buf, len);
	copy[len] = 0;
	*ret_owned = copy;
	return copy;
}

int auxcap_ipt_config_init(struct pt_config *config, const uint8_t *buf, size_t len,
			   const struct auxcap_ipt_params *params)
{
	/* libipt wants a non-NULL range even for an empty trace. */
	static uint8_t empty[1];
	int r;

	pt_config_init(config);
	config->begin = len ? (uint8_t *)buf : empty;
	config->end = config->begin + len;
	if (!params)
		return 0;
	config->cpu.vendor = params->cpu_set ? pcv_intel : pcv_unknown;
	config->cpu.family = params->cpu_family;
	config->cpu.model = params->cpu_model;
	config->cpu.stepping = params->cpu_stepping;
	config->mtc_freq = params->mtc_freq;
	config->nom_freq = params->nom_freq;
	config->cpuid_0x15_eax = params->cpuid_0x15_eax;
	config->cpuid_0x15_ebx = params->cpuid_0x15_ebx;
	config->addr_filter.config.addr_cfg = params->addr_cfg;
	config->addr_filter.addr0_a = params->addr_a[0];
	config->addr_filter.addr0_b = params->addr_b[0];
	config->addr_filter.addr1_a = params->addr_a[1];
	config->addr_filter.addr1_b = params->addr_b[1];
	config->addr_filter.addr2_a = params->addr_a[2];
	config->addr_filter.addr2_b = params->addr_b[2];
	config->addr_filter.addr3_a = params->addr_a[3];
	config->addr_filter.addr3_b = params->addr_b[3];
	r = auxcap_ipt_errata(params, &config->errata);
	/* An unknown CPU decodes without errata; the caller reports it if it cares. */
	return r == -pte_bad_cpu ? 0 : r;
}

int auxcap_ipt_errno(int pte)
{
	if (pte >= 0)
		return pte;
	switch (pt_errcode(pte)) {
	case pte_ok:
		return 0;
	case pte_nomem:
		return -ENOMEM;
	case pte_invalid:
	case pte_bad_config:
		return -EINVAL;
	case pte_eos:
		return -ENODATA;
	case pte_nomap:
		return -EFAULT;
	case pte_bad_file:
		return -EIO;
	case pte_bad_cpu:
		return -ENOENT;
	case pte_not_supported:
		return -EOPNOTSUPP;
	case pte_no_time:
	case pte_no_cbr:
		return -ENODATA;
	case pte_overflow:
		return -EOVERFLOW;
	case pte_bad_lock:
	case pte_internal:
		return -EFAULT;
	default:
		/* nosync, bad_opc, bad_packet, bad_context, bad_query, noip, ip_suppressed,
		 * bad_insn, bad_image, retstack_empty, bad_retcomp, bad_status_update,
		 * no_enable, event_ignored: the trace does not decode. */
		return -EBADMSG;
	}
}

const char *auxcap_ipt_strerror(int code)
{
	if (code < 0)
		code = -code;
	return pt_errstr((enum pt_error_code)code);
}
