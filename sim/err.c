#include "sim/err.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/text.h"

void sim_err_clear(sim_err *err)
{
    if (err == NULL)
        return;
    err->code = SIM_OK;
    err->file[0] = '\0';
    err->path[0] = '\0';
    err->msg[0] = '\0';
}

/* The code point of the UTF-8 character p[0..len) if a message must not show it raw (else
 * 0): an invisible format character (sim_text_invisible: a key "a\u202eb", RIGHT-TO-LEFT
 * OVERRIDE, reversed the rest of "unknown key (valid: ...)" on the screen, and a trace's value
 * "\ufeff0" read `got "0"`) or a space other than U+0020 (sim_text_wide_space: a trace's worker
 * "0<U+00A0>" read `got "0 "`, as if a plain space were refused). */
static unsigned invisible(const char *p, size_t len)
{
    unsigned cp = len >= 2 ? sim_text_code_point(p, len) : 0;
    return sim_text_invisible(cp) || sim_text_wide_space(cp) ? cp : 0;
}

/* Copies raw into out[size], each control character (C0, DEL, C1) and invisible format
 * character written as JSON escapes it ("\u001b", "\u202e"):
 * a message quoting a file's string (a golden.json's version "0.1.0\u001b[31m") sent the
 * terminal its escape sequence, or broke its line; and each byte that opens no UTF-8
 * character as "\xff": a golden's directory "seed-5\xff" (a name is any bytes) was quoted
 * raw, and the message was no UTF-8. */
static void escape_bytes(char *out, size_t size, const char *raw)
{
    size_t n = 0;
    for (const char *p = raw; *p != '\0';) {
        unsigned char c = (unsigned char)*p;
        size_t len = sim_text_utf8_len(p);
        /* U+0080-U+009F too, the C1 controls: a key "\u009b[31m" sent the terminal a CSI. */
        bool c1 = len == 2 && c == 0xc2 && (unsigned char)p[1] < 0xa0;
        bool control = c < 0x20 || c == 0x7f || c1;
        unsigned hidden = invisible(p, len); /* and the invisible format characters */
        size_t room = control || hidden != 0 ? 6 : len == 0 ? 4 : len;
        if (n + room >= size)
            break;
        if (control) {
            n += (size_t)snprintf(out + n, size - n, "\\u%04x", c1 ? (unsigned char)p[1] : c);
        } else if (hidden != 0) {
            n += (size_t)snprintf(out + n, size - n, "\\u%04x", hidden);
        } else if (len == 0) {
            n += (size_t)snprintf(out + n, size - n, "\\x%02x", c);
        } else {
            memcpy(out + n, p, len);
            n += len;
        }
        p += len == 0 ? 1 : len;
    }
    out[n] = '\0';
}

/* Copies the JSON path `path` into out[size], or, when it does not fit, as much of it as
 * fits in whole characters followed by "...": a path cut silently read as a whole one (a key
 * `$.compute["ééé` without its end). */
static void put_path(char *out, size_t size, const char *path)
{
    size_t n = strlen(path);
    if (n < size) {
        memcpy(out, path, n + 1);
        return;
    }
    memcpy(out, path, size - 4);
    out[size - 4] = '\0';
    sim_text_utf8_trim(out);
    strcat(out, "...");
}

int sim_err_set(sim_err *err, int code, const char *path, const char *fmt, ...)
{
    if (err == NULL)
        return code;
    err->code = code;
    put_path(err->path, sizeof(err->path), path != NULL ? path : "");
    char raw[sizeof(err->msg)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof(raw), fmt, ap);
    va_end(ap);
    sim_text_utf8_trim(raw); /* a character vsnprintf cut is dropped, not escaped */
    escape_bytes(err->msg, sizeof(err->msg), raw);
    sim_text_utf8_trim(err->msg); /* a long message cut to its room: whole characters */
    return code;
}

/* Writes prefix and the formatted text, escaped, as a line to log. */
static void escaped_line(FILE *log, const char *prefix, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

static void escaped_line(FILE *log, const char *prefix, const char *fmt, va_list ap)
{
    char raw[SIM_ERR_MSG_MAX], text[SIM_ERR_MSG_MAX];
    vsnprintf(raw, sizeof(raw), fmt, ap);
    sim_text_utf8_trim(raw);
    escape_bytes(text, sizeof(text), raw);
    sim_text_utf8_trim(text);
    fprintf(log, "%s%s\n", prefix, text);
}

void sim_err_warn(FILE *log, const char *fmt, ...)
{
    if (log == NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    escaped_line(log, "hetsim: ", fmt, ap);
    va_end(ap);
}

void sim_err_line(FILE *out, const char *fmt, ...)
{
    if (out == NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    escaped_line(out, "", fmt, ap);
    va_end(ap);
}

void sim_err_path(sim_err *err, const char *path)
{
    if (err != NULL)
        put_path(err->path, sizeof(err->path), path != NULL ? path : "");
}

int sim_err_file(sim_err *err, const char *file)
{
    if (err == NULL)
        return SIM_OK;
    if (err->file[0] == '\0' && file != NULL)
        snprintf(err->file, sizeof(err->file), "%s", file);
    sim_text_utf8_trim(err->file);
    return err->code;
}

void sim_err_format(const sim_err *err, char *buf, unsigned long size)
{
    if (size == 0)
        return;
    buf[0] = '\0';
    if (err == NULL)
        return;
    const char *msg = err->msg[0] != '\0' ? err->msg : sim_strerror(err->code);
    if (err->file[0] != '\0' && err->path[0] != '\0')
        snprintf(buf, size, "%s: %s: %s", err->file, err->path, msg);
    else if (err->file[0] != '\0')
        snprintf(buf, size, "%s: %s", err->file, msg);
    else if (err->path[0] != '\0')
        snprintf(buf, size, "%s: %s", err->path, msg);
    else
        snprintf(buf, size, "%s", msg);
    sim_text_utf8_trim(buf);
    /* The file and the path are any bytes (a file name, a --set key): escaped as the message
     * is. Escaped text is ASCII, so the message is not escaped twice. */
    char *raw = strdup(buf);
    if (raw != NULL)
        escape_bytes(buf, size, raw);
    free(raw);
}

const char *sim_strerror(int code)
{
    switch (code) {
#define SIM_ERR_CASE(name, value, text) \
    case (value):                       \
        return text;
        SIM_ERRORS(SIM_ERR_CASE)
#undef SIM_ERR_CASE
    }
    return "unknown error";
}
