#include "outputs/output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/file.h"

struct sim_file {
    FILE *f;
    char *tmp;   /* dir/name.tmp */
    char *final; /* dir/name */
};

static int mkdirs(const char *dir, int links, sim_err *err);

/* Makes the directory that the symbolic link `path` names but that does not exist yet (its
 * target, taken from the link's folder when relative). */
static int make_target(const char *path, int links, sim_err *err)
{
    char target[PATH_MAX];
    ssize_t n = links < 40 ? readlink(path, target, sizeof(target) - 1) : -1;
    if (n < 0)
        return sim_err_set(err, SIM_EIO, NULL, "cannot follow the link %s: %s", path,
                           links < 40 ? strerror(errno) : "more than 40 links");
    target[n] = '\0';
    const char *slash = strrchr(path, '/');
    size_t dirlen = target[0] != '/' && slash != NULL ? (size_t)(slash - path) + 1 : 0;
    char *full = malloc(dirlen + (size_t)n + 1);
    if (full == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    memcpy(full, path, dirlen);
    memcpy(full + dirlen, target, (size_t)n + 1);
    int rc = mkdirs(full, links + 1, err);
    free(full);
    return rc;
}

/* sim_output_mkdirs, `links` symbolic links deep. */
static int mkdirs(const char *dir, int links, sim_err *err)
{
    size_t len = strlen(dir);
    if (len == 0)
        return sim_err_set(err, SIM_EIO, NULL, "empty output directory name");
    char *path = malloc(len + 1);
    if (path == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    memcpy(path, dir, len + 1);
    int rc = SIM_OK;
    for (size_t i = 1; i <= len && rc == SIM_OK; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        char saved = path[i];
        path[i] = '\0';
        struct stat st;
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            rc = sim_err_set(err, SIM_EIO, NULL, "cannot create directory %s: %s", path,
                             strerror(errno));
        else if (stat(path, &st) != 0 && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
            rc = make_target(path, links, err); /* a link to a directory not made yet */
        if (rc == SIM_OK && (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)))
            rc = sim_err_set(err, SIM_EIO, NULL, "%s exists and is not a directory", path);
        path[i] = saved;
    }
    free(path);
    return rc;
}

int sim_output_mkdirs(const char *dir, sim_err *err)
{
    return mkdirs(dir, 0, err);
}

char *sim_output_join(const char *dir, const char *name, const char *suffix)
{
    size_t n = strlen(dir) + strlen(name) + strlen(suffix) + 2;
    char *s = malloc(n);
    if (s != NULL)
        snprintf(s, n, "%s/%s%s", dir, name, suffix);
    return s;
}

int sim_output_tmp_open(const char *tmp, sim_err *err)
{
    int fd = -1;
    if (unlink(tmp) == 0 || errno == ENOENT)
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0)
        sim_err_set(err, SIM_EIO, NULL, "cannot write %s: %s", tmp, strerror(errno));
    return fd;
}

sim_file *sim_file_open(const char *dir, const char *name, sim_err *err)
{
    sim_file *f = calloc(1, sizeof(*f));
    if (f == NULL)
        goto fail_nomem;
    f->tmp = sim_output_join(dir, name, ".tmp");
    f->final = sim_output_join(dir, name, "");
    if (f->tmp == NULL || f->final == NULL)
        goto fail_free;
    int fd = sim_output_tmp_open(f->tmp, err);
    f->f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (f->f == NULL) {
        if (fd >= 0) {
            sim_err_set(err, SIM_EIO, NULL, "cannot write %s: %s", f->tmp, strerror(errno));
            close(fd);
            unlink(f->tmp);
        }
        free(f->tmp);
        free(f->final);
        free(f);
        return NULL;
    }
    return f;
fail_free:
    free(f->tmp);
    free(f->final);
    free(f);
fail_nomem:
    sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    return NULL;
}

FILE *sim_file_stream(sim_file *f)
{
    return f->f;
}

static void file_free(sim_file *f)
{
    free(f->tmp);
    free(f->final);
    free(f);
}

int sim_file_commit(sim_file *f, sim_err *err)
{
    int bad = ferror(f->f);
    if (fclose(f->f) != 0)
        bad = 1;
    if (bad || rename(f->tmp, f->final) != 0) {
        int e = errno;
        sim_err_set(err, SIM_EIO, NULL, "cannot write %s: %s", f->final, strerror(e));
        remove(f->tmp);
        file_free(f);
        return SIM_EIO;
    }
    file_free(f);
    return SIM_OK;
}

void sim_file_abort(sim_file *f)
{
    if (f == NULL)
        return;
    fclose(f->f);
    remove(f->tmp);
    file_free(f);
}

int sim_output_write(const char *dir, const char *name, const char *text, sim_err *err)
{
    sim_file *f = sim_file_open(dir, name, err);
    if (f == NULL)
        return err != NULL ? err->code : SIM_EIO;
    fputs(text, f->f);
    return sim_file_commit(f, err);
}

size_t sim_output_format_g(char *buf, double x, int digits)
{
    /* printf's %.Pg prints an integer-valued x with |x| < 10^P in style f with its trailing
     * zeros and point removed: its plain decimal digits (P <= 17 keeps it below 2^63, and
     * every such double is exactly an int64_t). -0 keeps its sign, as printf does. */
    static const double limit[18] = { 1e0, 1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,
                                      1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17 };
    if (digits >= 1 && digits <= 17 && fabs(x) < limit[digits] && x == (double)(int64_t)x) {
        int64_t v = (int64_t)x;
        char tmp[20];
        size_t n = 0, len = 0;
        uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
        do {
            tmp[n++] = (char)('0' + u % 10);
            u /= 10;
        } while (u != 0);
        if (v < 0 || (v == 0 && signbit(x)))
            buf[len++] = '-';
        while (n > 0)
            buf[len++] = tmp[--n];
        buf[len] = '\0';
        return len;
    }
    int len = snprintf(buf, SIM_OUTPUT_G_MAX, "%.*g", digits, x);
    return len > 0 ? (size_t)len : 0;
}

void sim_output_json_double(FILE *f, double x)
{
    char buf[SIM_OUTPUT_G_MAX];
    if (isfinite(x)) {
        sim_output_format_g(buf, x, 17);
        fputs(buf, f);
    } else {
        fputs("null", f);
    }
}

/* `f` read whole by `reader` (sim_file_read_all or sim_file_read_sized), closed. */
static char *read_from(FILE *f, size_t *len, int (*reader)(FILE *, char **, size_t *))
{
    if (f == NULL)
        return NULL;
    char *buf = NULL;
    size_t n = 0;
    int rc = reader(f, &buf, &n);
    fclose(f);
    if (rc != 0) {
        errno = rc;
        return NULL;
    }
    if (len != NULL)
        *len = n;
    return buf;
}

char *sim_output_read_own(const char *path, size_t *len)
{
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) { /* hetsim writes no link */
        errno = EINVAL;
        return NULL;
    }
    /* The type is read from the open file: a FIFO swapped in after a stat waited forever. */
    return read_from(sim_file_open_regular(path, &st), len, sim_file_read_all);
}

/* The file at `path` read whole by `reader`. */
static char *read_with(const char *path, size_t *len, int (*reader)(FILE *, char **, size_t *))
{
    return read_from(sim_file_open_text(path), len, reader);
}

char *sim_output_read(const char *path, size_t *len)
{
    return read_with(path, len, sim_file_read_all);
}

char *sim_output_read_sized(const char *path, size_t *len)
{
    return read_with(path, len, sim_file_read_sized);
}

void sim_output_csv_field(FILE *f, const char *s)
{
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s != '\0'; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void sim_output_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static void newline(FILE *f, int level)
{
    fputc('\n', f);
    for (int i = 0; i < level; i++)
        fputs("  ", f);
}

/* True if the array opening at *p holds no object or array. */
static bool flat_array(const char *p)
{
    bool in_string = false;
    for (p++; *p != '\0'; p++) {
        if (in_string) {
            if (*p == '\\' && p[1] != '\0')
                p++;
            else if (*p == '"')
                in_string = false;
        } else if (*p == '"') {
            in_string = true;
        } else if (*p == '{' || *p == '[') {
            return false;
        } else if (*p == ']') {
            return true;
        }
    }
    return true;
}

void sim_output_json_pretty(FILE *f, const char *json, int level)
{
    bool in_string = false;
    int flat = 0; /* inside a flat array: depth of flat arrays open */
    for (const char *p = json; *p != '\0'; p++) {
        char c = *p;
        if (in_string) {
            fputc(c, f);
            if (c == '\\' && p[1] != '\0')
                fputc(*++p, f);
            else if (c == '"')
                in_string = false;
            continue;
        }
        switch (c) {
        case '"':
            in_string = true;
            fputc(c, f);
            break;
        case '{':
        case '[':
            fputc(c, f);
            if (c == '[' && (flat > 0 || flat_array(p))) {
                flat++;
            } else if (p[1] != '}' && p[1] != ']') {
                newline(f, ++level);
            } else {
                level++;
            }
            break;
        case '}':
        case ']':
            if (c == ']' && flat > 0) {
                flat--;
            } else {
                level--;
                if (p[-1] != '{' && p[-1] != '[')
                    newline(f, level);
            }
            fputc(c, f);
            break;
        case ',':
            fputc(c, f);
            if (flat > 0)
                fputc(' ', f);
            else
                newline(f, level);
            break;
        case ':':
            fputs(": ", f);
            break;
        default:
            fputc(c, f);
        }
    }
}

void sim_report_add(sim_report *r, const char *key, double value)
{
    if (r->n >= SIM_REPORT_MAX)
        return;
    r->key[r->n] = key;
    r->value[r->n] = value;
    r->n++;
}
