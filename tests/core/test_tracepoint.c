/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of auxcap/tracepoint.h: format files (the kernel's layout: fixed fields, char
 * arrays, pointers, integer arrays, __data_loc and __rel_loc strings) and the text of each
 * field in raw data built here; then every format file of this machine's tracefs, when it
 * can be read, must parse with its fields inside the raw data's size.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "auxcap/tracepoint.h"

static const char sched_fmt[] =
	"name: sched_switch\n"
	"ID: 372\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:const char * filename;\toffset:40;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long args[2];\toffset:48;\tsize:16;\tsigned:0;\n"
	"\tfield:__data_loc char[] name;\toffset:64;\tsize:4;\tsigned:0;\n"
	"\tfield:__rel_loc char[] rel;\toffset:68;\tsize:4;\tsigned:0;\n"
	"\tfield:s8 small;\toffset:72;\tsize:1;\tsigned:1;\n"
	"\n"
	"print fmt: \"prev_comm=%s\", REC->prev_comm\n";

static const struct auxcap_tp_field *field(const struct auxcap_tp_format *f, const char *name)
{
	for (size_t i = 0; i < f->nr_fields; i++)
		if (!strcmp(f->fields[i].name, name))
			return &f->fields[i];
	fail_msg("no field %s", name);
	return NULL;
}

static void test_parse_and_text(void **state)
{
	struct auxcap_tp_format *f = NULL;
	unsigned char raw[96];
	char buf[128];
	uint32_t u32;
	int32_t i32 = -7;
	int64_t i64 = -1;
	uint64_t u64, v;

	(void)state;
	assert_int_equal(auxcap_tp_format_parse(sched_fmt, sizeof(sched_fmt) - 1, &f), 0);
	assert_int_equal(f->id, 372);
	assert_string_equal(f->name, "sched_switch");
	assert_int_equal(f->nr_fields, 12);
	assert_true(field(f, "common_pid")->common && !field(f, "prev_pid")->common);
	assert_int_equal(field(f, "prev_comm")->kind, AUXCAP_TP_STRING);
	assert_int_equal(field(f, "prev_pid")->kind, AUXCAP_TP_INT);
	assert_int_equal(field(f, "filename")->kind, AUXCAP_TP_POINTER);
	assert_int_equal(field(f, "args")->kind, AUXCAP_TP_ARRAY);
	assert_int_equal(field(f, "args")->elem_size, 8);
	assert_true(field(f, "name")->dynamic && !field(f, "name")->relative);
	assert_true(field(f, "rel")->dynamic && field(f, "rel")->relative);

	memset(raw, 0, sizeof(raw));
	memcpy(raw + 8, "bash\0garbage!!!", 16);
	memcpy(raw + 24, &i32, 4);
	memcpy(raw + 32, &i64, 8);
	u64 = 0x7ffc1234;
	memcpy(raw + 40, &u64, 8);
	u64 = 3;
	memcpy(raw + 48, &u64, 8);
	u64 = 0xff;
	memcpy(raw + 56, &u64, 8);
	memcpy(raw + 80, "hi\0", 3);
	u32 = (3u << 16) | 80; /* "hi" at 80, 3 bytes */
	memcpy(raw + 64, &u32, 4);
	memcpy(raw + 84, "x\x01y", 4);
	u32 = (4u << 16) | (84 - 72); /* from the end of the locator (72) */
	memcpy(raw + 68, &u32, 4);
	raw[72] = 0xfe; /* -2 */

	assert_int_equal(auxcap_tp_field_text(field(f, "prev_comm"), raw, sizeof(raw), buf,
					      sizeof(buf)), 4);
	assert_string_equal(buf, "bash");
	auxcap_tp_field_text(field(f, "prev_pid"), raw, sizeof(raw), buf, sizeof(buf));
	assert_string_equal(buf, "-7");
	auxcap_tp_field_text(field(f, "prev_state"), raw, sizeof(raw), buf, sizeof(buf));
	assert_string_equal(buf, "-1");
	auxcap_tp_field_text(field(f, "filename"), raw, sizeof(raw), buf, sizeof(buf));
	assert_string_equal(buf, "0x7ffc1234");
	auxcap_tp_field_text(field(f, "args"), raw, sizeof(raw), buf, sizeof(buf));
	assert_string_equal(buf, "0x3,0xff");
	auxcap_tp_field_text(field(f, "name"), raw, sizeof(raw), buf, sizeof(buf));
	assert_string_equal(buf, "hi");
	auxcap_tp_field_text(field(f, "rel"), raw, sizeof(raw), buf, sizeof(buf));
	assert_string_equal(buf, "x\\x01y");
	auxcap_tp_field_text(field(f, "small"), raw, sizeof(raw), buf, sizeof(buf));
	assert_string_equal(buf, "-2");
	assert_int_equal(auxcap_tp_field_int(field(f, "small"), raw, sizeof(raw), &v), 0);
	assert_true(v == (uint64_t)-2);
	assert_int_equal(auxcap_tp_field_int(field(f, "prev_comm"), raw, sizeof(raw), &v),
			 -EINVAL);

	/* outside the raw data: the field, or the data a locator points at */
	assert_int_equal(auxcap_tp_field_text(field(f, "args"), raw, 50, buf, sizeof(buf)),
			 -ERANGE);
	u32 = (40u << 16) | 80;
	memcpy(raw + 64, &u32, 4);
	assert_int_equal(auxcap_tp_field_text(field(f, "name"), raw, sizeof(raw), buf,
					      sizeof(buf)), -ERANGE);
	/* a small buffer: cut, NUL-terminated */
	assert_int_equal(auxcap_tp_field_text(field(f, "prev_comm"), raw, sizeof(raw), buf, 3), 2);
	assert_string_equal(buf, "ba");
	auxcap_tp_format_free(f);
}

static void test_bad_formats(void **state)
{
	static const char no_id[] = "name: x\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:1;\n";
	static const char no_size[] = "name: x\nID: 1\nformat:\n\tfield:int a;\toffset:0;\tsigned:1;\n";
	static const char far[] = "ID: 1\n\tfield:int a;\toffset:70000;\tsize:4;\tsigned:1;\n";
	static const char no_name[] = "ID: 1\n\tfield: ;\toffset:0;\tsize:4;\tsigned:1;\n";
	struct auxcap_tp_format *f = (void *)1;

	(void)state;
	assert_int_equal(auxcap_tp_format_parse(no_id, sizeof(no_id) - 1, &f), -EBADMSG);
	assert_int_equal(auxcap_tp_format_parse(no_size, sizeof(no_size) - 1, &f), -EBADMSG);
	assert_int_equal(auxcap_tp_format_parse(far, sizeof(far) - 1, &f), -EBADMSG);
	assert_int_equal(auxcap_tp_format_parse(no_name, sizeof(no_name) - 1, &f), -EBADMSG);
	assert_ptr_equal(f, (void *)1); /* untouched */
	assert_int_equal(auxcap_tp_format_parse(NULL, 0, &f), -EINVAL);
	/* the text need not end with a newline, nor be NUL-terminated */
	assert_int_equal(auxcap_tp_format_parse("ID: 5\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:1;XX",
						48, &f), 0);
	assert_int_equal(f->id, 5);
	assert_int_equal(f->nr_fields, 1);
	auxcap_tp_format_free(f);
	/* a text that ends with a number, in a buffer of exactly its size (no NUL after it: the
	 * fuzzer found the parser reading past it) */
	{
		static const char tail[] = "ID: 7\n\tfield:int a;\toffset:0;\tsize:4";
		char *p = malloc(sizeof(tail) - 1);

		assert_non_null(p);
		memcpy(p, tail, sizeof(tail) - 1);
		assert_int_equal(auxcap_tp_format_parse(p, sizeof(tail) - 1, &f), 0);
		assert_int_equal(f->id, 7);
		assert_int_equal(f->nr_fields, 1);
		assert_int_equal(f->fields[0].size, 4);
		auxcap_tp_format_free(f);
		free(p);
	}
	/* a flexible array (size 0): the rest of the raw data */
	assert_int_equal(auxcap_tp_format_parse("ID: 6\n\tfield:char buf[];\toffset:4;\tsize:0;\tsigned:0;\n",
						50, &f), 0);
	{
		char buf[16];

		assert_int_equal(auxcap_tp_field_text(&f->fields[0], "abcdefgh", 9, buf, sizeof(buf)),
				 4);
		assert_string_equal(buf, "efgh");
	}
	auxcap_tp_format_free(f);
}

/* Every format file of this machine: parses, and its fields lie inside a record. */
static void test_tracefs_formats(void **state)
{
	const char *roots[] = { "/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events" };
	size_t files = 0, fields = 0;
	DIR *top = NULL;
	const char *root = NULL;

	(void)state;
	for (size_t i = 0; i < 2 && !top; i++)
		if ((top = opendir(roots[i])))
			root = roots[i];
	if (!top) {
		printf("tracefs is not mounted or not readable here: skipped\n");
		skip();
	}
	for (struct dirent *s; (s = readdir(top));) {
		char path[1024];
		DIR *sys;

		if (s->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", root, s->d_name);
		if (!(sys = opendir(path)))
			continue;
		for (struct dirent *e; (e = readdir(sys));) {
			char fpath[2048], text[65536];
			struct auxcap_tp_format *f;
			FILE *fp;
			size_t n;

			if (e->d_name[0] == '.')
				continue;
			snprintf(fpath, sizeof(fpath), "%s/%s/format", path, e->d_name);
			if (!(fp = fopen(fpath, "r")))
				continue;
			n = fread(text, 1, sizeof(text), fp);
			fclose(fp);
			if (auxcap_tp_format_parse(text, n, &f) != 0)
				fail_msg("%s does not parse", fpath);
			for (size_t k = 0; k < f->nr_fields; k++)
				assert_true(f->fields[k].offset + f->fields[k].size <= 65536);
			files++;
			fields += f->nr_fields;
			auxcap_tp_format_free(f);
		}
		closedir(sys);
	}
	closedir(top);
	printf("%zu format files, %zu fields\n", files, fields);
	assert_true(files > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_and_text),
		cmocka_unit_test(test_bad_formats),
		cmocka_unit_test(test_tracefs_formats),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
