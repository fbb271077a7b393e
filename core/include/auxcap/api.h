/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap/api.h: AUXCAP_API marks the functions of the installed headers that out-of-tree
 * backends (plug-ins, see auxcap/backend.h) may call.
 *
 * auxcap is built with hidden symbol visibility; AUXCAP_API gives a function default
 * visibility, and the `auxcap` executable exports those functions to the plug-ins it dlopen()s
 * (it is linked with --export-dynamic).  Everything else in the headers (types, macros, inline
 * helpers) needs no symbol at all.
 */
#ifndef AUXCAP_API_H
#define AUXCAP_API_H

#if defined(__GNUC__) || defined(__clang__)
#define AUXCAP_API __attribute__((visibility("default")))
#else
#define AUXCAP_API
#endif

#endif /* AUXCAP_API_H */
