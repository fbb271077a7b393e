/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * With filter_prog_b.c: a program with two static functions of the same name ('helper'), for
 * the ambiguous-symbol rules of --filter (tests/aux/intel_pt/test_ipt_record.c).
 */
int helper_b(int x);

__attribute__((noinline, used)) static int helper(int x)
{
	return x * 3 + 1;
}

int main(int argc, char **argv)
{
	(void)argv;
	return helper(argc) + helper_b(argc) > 1000;
}
