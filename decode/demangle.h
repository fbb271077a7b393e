/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Symbol names as people read them: C++ (Itanium ABI) and Rust (legacy and v0) mangled names
 * demangled with libiberty, as perf, gdb and c++filt show them.
 */
#ifndef AUXCAP_DECODE_DEMANGLE_H
#define AUXCAP_DECODE_DEMANGLE_H

/**
 * The demangled form of @name ("_ZN2ns3fooEi" -> "ns::foo(int)", with parameters and
 * qualifiers; a clone suffix as " [clone .cold]"), into *@ret (malloc'd, the caller frees it).
 * Returns 1, 0 if @name is not a mangled name (or the build has no libiberty: *@ret is then
 * untouched), -ENOMEM.
 */
int auxcap_demangle(const char *name, char **ret);

#endif
