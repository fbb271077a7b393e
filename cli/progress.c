/* SPDX-License-Identifier: BSD-3-Clause */
/* The progress bar (progress.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/ioctl.h>

#include "progress.h"

#define REDRAW_NS 100000000ull /* at most 10 redraws a second */

static struct {
	bool on;	/* drawing */
	bool shown;	/* a bar is on the screen */
	bool drawn;	/* at least one was drawn */
	enum auxcap_decode_phase phase;
	uint64_t last_ns, start_ns;
} g_bar;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

bool cli_progress_begin(enum cli_progress_mode mode, bool output_on_tty)
{
	memset(&g_bar, 0, sizeof(g_bar));
	if (mode == CLI_PROGRESS_AUTO)
		g_bar.on = isatty(STDERR_FILENO) && !output_on_tty;
	else
		g_bar.on = mode == CLI_PROGRESS_ON;
	g_bar.start_ns = now_ns();
	return g_bar.on;
}

static int width(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
		return ws.ws_col > 160 ? 160 : ws.ws_col;
	return 80;
}

/* "12.3 MB" style sizes. */
static void size_text(char *buf, size_t n, uint64_t bytes)
{
	if (bytes >= 10000000ull)
		snprintf(buf, n, "%.1f MB", (double)bytes / 1e6);
	else if (bytes >= 10000ull)
		snprintf(buf, n, "%.1f kB", (double)bytes / 1e3);
	else
		snprintf(buf, n, "%" PRIu64 " B", bytes);
}

static void draw(enum auxcap_decode_phase phase, uint64_t done, uint64_t total, uint64_t t)
{
	char line[200], tail[80], a[24], b[24];
	unsigned int pct = total ? (unsigned int)(done * 100 / total) : 100;
	int w = width() - 1, bar, fill, n;

	size_text(a, sizeof(a), done);
	size_text(b, sizeof(b), total);
	snprintf(tail, sizeof(tail), " %3u%%  %s of %s  %.1f s", pct, a, b,
		 (double)(t - g_bar.start_ns) / 1e9);
	n = snprintf(line, sizeof(line), "auxcap: %-8s [",
		     phase == AUXCAP_DECODE_PHASE_READ ? "reading" : "decoding");
	bar = w - n - 1 - (int)strlen(tail);
	if (bar > 50)
		bar = 50;
	if (bar < 10)
		bar = 10;
	fill = total ? (int)((double)bar * (double)done / (double)total) : bar;
	for (int i = 0; i < bar && n < (int)sizeof(line) - 2; i++)
		line[n++] = i < fill ? '#' : '.';
	line[n++] = ']';
	line[n] = '\0';
	fprintf(stderr, "\r%s%s\033[K", line, tail);
	fflush(stderr);
	g_bar.shown = g_bar.drawn = true;
}

void cli_progress_update(void *arg, enum auxcap_decode_phase phase, uint64_t done,
			 uint64_t total)
{
	uint64_t t;

	(void)arg;
	if (!g_bar.on)
		return;
	t = now_ns();
	/* The first update, a new phase, then at most every REDRAW_NS. */
	if (g_bar.drawn && phase == g_bar.phase && t - g_bar.last_ns < REDRAW_NS)
		return;
	g_bar.phase = phase;
	g_bar.last_ns = t;
	draw(phase, done > total ? total : done, total, t);
}

void cli_progress_clear(void)
{
	if (!g_bar.shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	g_bar.shown = false;
	g_bar.last_ns = 0; /* drawn again at the next update */
	g_bar.drawn = false;
}

void cli_progress_end(void)
{
	cli_progress_clear();
	g_bar.on = false;
}
