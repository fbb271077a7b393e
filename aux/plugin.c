/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Loading out-of-tree backends: dlopen() a shared object, call its entry point
 * (AUXCAP_BACKEND_PLUGIN_SYMBOL) for its ops table, check it and register it.  Plug-ins stay
 * loaded for the life of the process (their ops tables are borrowed by the registry).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxcap/backend.h"

#define MAX_PLUGINS 32

/* Where each loaded plug-in came from. */
static struct {
	const struct auxcap_backend_ops *ops; /* borrowed from the plug-in */
	char *path;			      /* owned */
} g_plugins[MAX_PLUGINS];
static size_t g_nr_plugins;

__attribute__((format(printf, 4, 5))) static int fail(int err, char *errbuf, size_t errlen,
						      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (errbuf && errlen)
		vsnprintf(errbuf, errlen, fmt, ap);
	va_end(ap);
	return err;
}

int auxcap_backend_load(const char *path, const struct auxcap_backend_ops **ret_ops,
			char *errbuf, size_t errlen)
{
	const struct auxcap_backend_ops *ops;
	auxcap_backend_plugin_fn entry;
	void *h, *sym;
	char *copy;
	int r;

	if (!path || !*path)
		return fail(-EINVAL, errbuf, errlen, "no plug-in path given");
	if (g_nr_plugins == MAX_PLUGINS)
		return fail(-ENOSPC, errbuf, errlen, "plug-in '%s': at most %d plug-ins can be loaded",
			    path, MAX_PLUGINS);
	/* A bare file name is a file here, not a library to look up in the search path. */
	if (!strchr(path, '/')) {
		char local[4096];

		if ((size_t)snprintf(local, sizeof(local), "./%s", path) >= sizeof(local))
			return fail(-ENAMETOOLONG, errbuf, errlen, "plug-in path too long: '%s'",
				    path);
		h = dlopen(local, RTLD_NOW | RTLD_LOCAL);
	} else {
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	}
	if (!h) {
		const char *why = dlerror();

		return fail(-ENOENT, errbuf, errlen,
			    "cannot load plug-in '%s': %s (give the path of a shared object built "
			    "against auxcap's headers)",
			    path, why ? why : "unknown error");
	}
	dlerror();
	sym = dlsym(h, AUXCAP_BACKEND_PLUGIN_SYMBOL);
	if (!sym) {
		r = fail(-ENOEXEC, errbuf, errlen,
			 "'%s' is not an auxcap plug-in: it exports no %s() entry point (see "
			 "docs/writing-a-backend.md)",
			 path, AUXCAP_BACKEND_PLUGIN_SYMBOL);
		goto err_close;
	}
	/* Object to function pointer: POSIX guarantees dlsym() results convert. */
	memcpy(&entry, &sym, sizeof(entry));
	ops = entry();
	if (!ops) {
		r = fail(-EINVAL, errbuf, errlen, "plug-in '%s': %s() returned no ops table", path,
			 AUXCAP_BACKEND_PLUGIN_SYMBOL);
		goto err_close;
	}
	if (ops->abi != AUXCAP_BACKEND_ABI) {
		r = fail(-EPROTO, errbuf, errlen,
			 "plug-in '%s' was built for backend ABI %u, this auxcap has ABI %u: rebuild "
			 "it against this auxcap's headers",
			 path, ops->abi, AUXCAP_BACKEND_ABI);
		goto err_close;
	}
	copy = strdup(path);
	if (!copy) {
		r = fail(-ENOMEM, errbuf, errlen, "out of memory");
		goto err_close;
	}
	r = auxcap_backend_register(ops);
	if (r < 0) {
		free(copy);
		if (r == -EEXIST)
			fail(r, errbuf, errlen,
			     "plug-in '%s': a backend named '%s' is already loaded (built-in or "
			     "another plug-in); rename it",
			     path, ops->name);
		else if (r == -EINVAL)
			fail(r, errbuf, errlen,
			     "plug-in '%s': incomplete ops table (it needs a name and probe(); "
			     "info_size/info_fill, and decoder_new/next/free, come in groups; "
			     "info needs recording_options)",
			     path);
		else
			fail(r, errbuf, errlen, "plug-in '%s': cannot register it: %s", path,
			     strerror(-r));
		goto err_close;
	}
	g_plugins[g_nr_plugins].ops = ops;
	g_plugins[g_nr_plugins].path = copy;
	g_nr_plugins++;
	if (ret_ops)
		*ret_ops = ops;
	return 0;

err_close:
	dlclose(h);
	return r;
}

static int is_so(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' && n > 3 && !strcmp(d->d_name + n - 3, ".so");
}

int auxcap_backend_load_dir(const char *dir, auxcap_backend_load_report_fn report, void *arg)
{
	struct dirent **names = NULL;
	int n, loaded = 0;

	if (!dir)
		return -EINVAL;
	n = scandir(dir, &names, is_so, alphasort);
	if (n < 0)
		return errno == ENOENT ? 0 : -errno;
	for (int i = 0; i < n; i++) {
		char path[4096], err[512] = "";
		int r;

		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name) >=
		    sizeof(path))
			r = fail(-ENAMETOOLONG, err, sizeof(err), "plug-in path too long in '%s'",
				 dir);
		else
			r = auxcap_backend_load(path, NULL, err, sizeof(err));
		if (r == 0)
			loaded++;
		else if (report)
			report(arg, path, r, err);
		free(names[i]);
	}
	free(names);
	return loaded;
}

const char *auxcap_backend_origin(const struct auxcap_backend_ops *ops)
{
	for (size_t i = 0; i < g_nr_plugins; i++)
		if (g_plugins[i].ops == ops)
			return g_plugins[i].path;
	return NULL;
}
