// SPDX-License-Identifier: BSD-3-Clause
// A C++ program whose template's methods are inlined into a function, built with DWARF whatever
// the build type: tests/decode/test_elf_file.c compares the inline chains auxcap finds in run()
// with binutils' addr2line -C -i -f (C++ names: DWARF linkage names, demangled).
#include <cstdio>
#include <cstdlib>

namespace auxcap {

template <typename T> struct Box {
	T v;
	__attribute__((always_inline)) inline T get() const
	{
		return v * 3 + (v >> 2);
	}
	__attribute__((always_inline)) inline void add(T x)
	{
		v += get() ^ x;
	}
};

__attribute__((noinline)) unsigned long run(unsigned long n)
{
	Box<unsigned long> b{ 1 };

	for (unsigned long i = 0; i < n; i++)
		b.add(i);
	return b.v;
}

} // namespace auxcap

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? std::strtoul(argv[1], nullptr, 0) : 100;

	std::printf("%lu\n", auxcap::run(n));
	return 0;
}
