/* SPDX-License-Identifier: BSD-3-Clause */
/* The second 'helper' of the filter test program (see filter_prog_a.c). */
int helper_b(int x);

__attribute__((noinline, used)) static int helper(int x)
{
	return x ^ 0x55;
}

int helper_b(int x)
{
	return helper(x) + 2;
}
