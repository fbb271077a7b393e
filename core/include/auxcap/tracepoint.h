/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap/tracepoint.h: a tracepoint's format (tracefs events/SYSTEM/NAME/format, as a capture's
 * TRACING_DATA keeps it) and the fields of its samples' raw data (PERF_SAMPLE_RAW).
 *
 * The format lists each field with its C declaration, offset, size and signedness:
 *
 *	name: sched_switch
 *	ID: 372
 *	format:
 *		field:unsigned short common_type;	offset:0;	size:2;	signed:0;
 *		field:char prev_comm[16];	offset:8;	size:16;	signed:0;
 *		field:__data_loc char[] name;	offset:8;	size:4;	signed:0;
 *	print fmt: "...", ...
 *
 * Values are read by offset, size and signedness (the declared C type can be narrower than
 * the size: syscalls' "int dfd" takes 8 bytes); the print format is not evaluated here, so a
 * field prints as its value ("prev_state=1"), not as the kernel's text for it ("S"): the
 * decode stage's auxcap_decode_tp_print() gives that text (libtraceevent).
 */
#ifndef AUXCAP_TRACEPOINT_H
#define AUXCAP_TRACEPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** How a field's value is written. */
enum auxcap_tp_kind {
	AUXCAP_TP_INT = 0, /* an integer of 1, 2, 4 or 8 bytes: decimal */
	AUXCAP_TP_POINTER, /* a pointer (its declaration has a '*'): hex */
	AUXCAP_TP_STRING,  /* char NAME[N], or __data_loc/__rel_loc char[]: up to its NUL */
	AUXCAP_TP_ARRAY,   /* another array (of integers of @elem_size bytes): hex each */
	AUXCAP_TP_BYTES,   /* any other size, or dynamic data that is not text: hex bytes */
};

/** A field of a tracepoint's raw data. */
struct auxcap_tp_field {
	char *name;	     /* owned */
	uint32_t offset;     /* bytes from the start of the raw data */
	uint32_t size;	     /* bytes at @offset (a __data_loc field: its 4-byte locator) */
	bool is_signed;
	bool common;	     /* common_type, common_pid, ...: the kernel's own header */
	bool dynamic;	     /* __data_loc: u32 at @offset, (length << 16) | offset */
	bool relative;	     /* __rel_loc: ... offset from the end of the locator */
	bool flexible;	     /* NAME[] of size 0: the rest of the raw data */
	enum auxcap_tp_kind kind;
	uint32_t elem_size;  /* AUXCAP_TP_ARRAY: bytes of each element */
};

/** A tracepoint's format. */
struct auxcap_tp_format {
	uint64_t id;   /* its ID (perf_event_attr.config of a PERF_TYPE_TRACEPOINT event) */
	char *name;    /* owned: "sched_switch" */
	struct auxcap_tp_field *fields; /* owned, in the format's order */
	size_t nr_fields;
};

/**
 * Parse the @len bytes of a format file at @text into *@ret (owned by the caller: free it
 * with auxcap_tp_format_free()).  Lines it does not know are skipped.
 *
 * Returns 0, -EINVAL for a NULL argument, -EBADMSG if the text has no "ID:" line or a field
 * line is malformed (no offset or size, a field outside 64 KiB), -ENOMEM.
 */
int auxcap_tp_format_parse(const char *text, size_t len, struct auxcap_tp_format **ret);

void auxcap_tp_format_free(struct auxcap_tp_format *f);

/**
 * The value of field @fld in the raw data @raw (@size bytes), as text into @buf (at most
 * @bufsize bytes, always NUL-terminated when @bufsize is not 0): an integer in decimal, a
 * pointer in hex (0x...), a string as it is (bytes below 0x20 or above 0x7e as \xNN), an
 * array as its elements in hex joined by ',', other bytes in hex.
 *
 * Returns the length of the text (cut to fit @buf), or -ERANGE if the field, or the
 * dynamic data it locates, lies outside @raw.
 */
int auxcap_tp_field_text(const struct auxcap_tp_field *fld, const void *raw, size_t size,
			 char *buf, size_t bufsize);

/**
 * Field @fld as an integer (AUXCAP_TP_INT, AUXCAP_TP_POINTER): into *@ret, sign-extended
 * when the field is signed.  Returns 0, -ERANGE if it lies outside @raw, -EINVAL for another
 * kind.
 */
int auxcap_tp_field_int(const struct auxcap_tp_field *fld, const void *raw, size_t size,
			uint64_t *ret);

#endif /* AUXCAP_TRACEPOINT_H */
