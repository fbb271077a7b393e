/* SPDX-License-Identifier: BSD-3-Clause */
/* aux/intel_pt/ipt_config.c and argument checks of the other entry points. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ipt.h"

static void test_ipt_parse_cpu_accepts_ptxed_syntax(void **state)
{
	struct auxcap_ipt_params p = { .sz = sizeof(p) };

	(void)state;
	assert_int_equal(auxcap_ipt_params_parse_cpu(&p, "6/142"), 0);
	assert_true(p.cpu_set);
	assert_int_equal(p.cpu_family, 6);
	assert_int_equal(p.cpu_model, 142);
	assert_int_equal(p.cpu_stepping, 0);
	assert_int_equal(auxcap_ipt_params_parse_cpu(&p, "0x6/0x8e/10"), 0);
	assert_int_equal(p.cpu_model, 0x8e);
	assert_int_equal(p.cpu_stepping, 10);
}

static void test_ipt_parse_cpu_rejects_bad_input_untouched(void **state)
{
	static const char *const bad[] = { "",	  "6",	     "6/",   "/142", "6/142/",	"6/256",
					   "x/1", "6/1/2/3", "-6/1", "6/1x", "65536/1", "6 /1" };
	struct auxcap_ipt_params p = { .sz = sizeof(p) };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(auxcap_ipt_params_parse_cpu(&p, bad[i]), -EINVAL);
		assert_false(p.cpu_set);
	}
	assert_int_equal(auxcap_ipt_params_parse_cpu(NULL, "6/1"), -EINVAL);
	assert_int_equal(auxcap_ipt_params_parse_cpu(&p, NULL), -EINVAL);
}

static void test_ipt_check_cpu_knows_old_and_new_models(void **state)
{
	struct auxcap_ipt_params p = { .sz = sizeof(p) };

	(void)state;
	assert_int_equal(auxcap_ipt_params_check_cpu(&p), 0); /* no cpu: nothing to know */
	assert_int_equal(auxcap_ipt_params_parse_cpu(&p, "6/78"), 0);
	assert_int_equal(auxcap_ipt_params_check_cpu(&p), 0); /* libipt 2.0.5 knows it */
	assert_int_equal(auxcap_ipt_params_parse_cpu(&p, "6/173"), 0);
	assert_int_equal(auxcap_ipt_params_check_cpu(&p), 0); /* our table: Granite Rapids */
	assert_int_equal(auxcap_ipt_params_parse_cpu(&p, "18/1"), 0);
	assert_int_equal(auxcap_ipt_params_check_cpu(&p), 0);
	assert_int_equal(auxcap_ipt_params_parse_cpu(&p, "0/0"), 0);
	assert_int_equal(auxcap_ipt_params_check_cpu(&p), -ENOENT);
	assert_int_equal(auxcap_ipt_params_check_cpu(NULL), -EINVAL);
}

static void test_ipt_errno_and_strerror(void **state)
{
	(void)state;
	/* libipt codes (enum pt_error_code): 7 eos, 9 nomem, 13 nomap, 4 bad_opc, 27 bad_cpu */
	assert_int_equal(auxcap_ipt_errno(5), 5);
	assert_int_equal(auxcap_ipt_errno(0), 0);
	assert_int_equal(auxcap_ipt_errno(-7), -ENODATA);
	assert_int_equal(auxcap_ipt_errno(-9), -ENOMEM);
	assert_int_equal(auxcap_ipt_errno(-13), -EFAULT);
	assert_int_equal(auxcap_ipt_errno(-4), -EBADMSG);
	assert_int_equal(auxcap_ipt_errno(-27), -ENOENT);
	assert_string_equal(auxcap_ipt_strerror(13), "no memory mapped at this address");
	assert_string_equal(auxcap_ipt_strerror(-4), "unknown opcode");
}

static void test_ipt_image_and_decoder_args(void **state)
{
	struct auxcap_ipt_params small = { .sz = 4 };
	struct auxcap_ipt_decoder_opts small_opts = { .sz = 4 };
	struct auxcap_ipt_decoder *dec = (struct auxcap_ipt_decoder *)(uintptr_t)0x1;
	struct auxcap_ipt_image *image = NULL;
	struct auxcap_ipt_item item;
	char path[] = "/tmp/auxcap-test-ipt-XXXXXX";
	uint8_t byte = 0;
	int fd;

	(void)state;
	assert_int_equal(auxcap_ipt_image_new(NULL), -EINVAL);
	assert_int_equal(auxcap_ipt_image_new(&image), 0);
	assert_int_equal(auxcap_ipt_image_add_raw(image, "/nonexistent/code.bin", 0, 0, 0x1000),
			 -ENOENT);
	assert_int_equal(auxcap_ipt_image_add_raw(image, "/tmp", 0, 0, 0x1000), -EINVAL);
	assert_int_equal(auxcap_ipt_image_add_raw(NULL, "/tmp", 0, 0, 0), -EINVAL);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(auxcap_ipt_image_add_raw(image, path, 0, 0, 0x1000), -ERANGE);
	assert_int_equal(write(fd, "\x90\x90\xc3", 3), 3);
	close(fd);
	assert_int_equal(auxcap_ipt_image_add_raw(image, path, 0, 0, 0x1000), 0);
	assert_int_equal(auxcap_ipt_image_add_raw(image, path, 3, 0, 0x1000), -ERANGE);
	unlink(path);

	assert_int_equal(auxcap_ipt_decoder_new(NULL, 1, image, NULL, NULL, &dec), -EINVAL);
	assert_int_equal(auxcap_ipt_decoder_new(&byte, 1, NULL, NULL, NULL, &dec), -EINVAL);
	assert_int_equal(auxcap_ipt_decoder_new(&byte, 1, image, &small, NULL, &dec), -EINVAL);
	assert_int_equal(auxcap_ipt_decoder_new(&byte, 1, image, NULL, &small_opts, &dec), -EINVAL);
	assert_int_equal(auxcap_ipt_decoder_new(&byte, 1, image, NULL, NULL, NULL), -EINVAL);
	assert_ptr_equal(dec, (struct auxcap_ipt_decoder *)(uintptr_t)0x1);
	/* An empty trace decodes to nothing. */
	assert_int_equal(auxcap_ipt_decoder_new(NULL, 0, image, NULL, NULL, &dec), 0);
	assert_int_equal(auxcap_ipt_decoder_next(dec, &item), 0);
	assert_int_equal(auxcap_ipt_decoder_next(dec, NULL), -EINVAL);
	assert_int_equal(auxcap_ipt_decoder_next(NULL, &item), -EINVAL);
	auxcap_ipt_decoder_free(dec);
	auxcap_ipt_decoder_free(NULL);
	auxcap_ipt_image_free(image);
	auxcap_ipt_image_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipt_parse_cpu_accepts_ptxed_syntax),
		cmocka_unit_test(test_ipt_parse_cpu_rejects_bad_input_untouched),
		cmocka_unit_test(test_ipt_check_cpu_knows_old_and_new_models),
		cmocka_unit_test(test_ipt_errno_and_strerror),
		cmocka_unit_test(test_ipt_image_and_decoder_args),
	};

	return cmocka_run_group_tests_name("aux/intel_pt/ipt_config", tests, NULL, NULL);
}
