/* Files hetsim reads or writes that are no regular file: what one is, named in messages; and
 * the one cap on the bytes of a text input.
 *
 * A reader or a writer that refuses a file for its type (a FIFO it would wait on, a device
 * that never ends, a directory, a socket) says which type it met, through sim_file_kind:
 * one list of names, so that no message names a socket "a FIFO or a directory". A text file
 * read whole is opened through sim_file_open_text, which never waits on a device.
 *
 * Every text input hetsim reads whole (a scenario, a sweep file and its base, `report
 * --names`, a --style copy, a golden's JSON: sim_file_read_all) or line by line (a layer
 * profile, a straggler trace: sim_file_lines) stops past sim_file_text_cap() bytes (1 GiB),
 * refused with the file and the cap (sim_file_cap_text): a FIFO fed by `yes` grew the
 * scenario reader's buffer without bound (7.4 GB in 32 s), and endless comment lines of a
 * profile were read forever. The cap is a count of bytes, not of lines; a profile and a trace
 * keep their own row limits. A results file (regular: sim_csv_read refuses any other) is read
 * to its size (sim_file_read_sized): the cap is for inputs that may never end. Binary inputs (IDX,
 * gzip) stop at the sizes their headers give, LIBSVM data is refused unless a regular file (it is
 * read twice). Implemented in sim/file.c.
 */
#ifndef SIM_FILE_H
#define SIM_FILE_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* The type of a file of mode `mode` (stat's st_mode; lstat's for a link), with its article:
 * "a regular file", "a directory", "a FIFO", "a socket", "a character device", "a block
 * device", "a symbolic link", or "a special file" for any other. */
static inline const char *sim_file_kind(mode_t mode)
{
    return S_ISREG(mode)    ? "a regular file"
           : S_ISDIR(mode)  ? "a directory"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISSOCK(mode) ? "a socket"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISLNK(mode)  ? "a symbolic link"
                            : "a special file";
}

/* fopen(path, "rb"), but a character or block device is read without blocking: one that
 * waits for input (a pseudo-terminal's master, /dev/ptmx, or a terminal) was waited on
 * forever; its read now fails with EAGAIN, named by the caller. /dev/zero and /dev/null read
 * as before, and so does a FIFO (a profiler's is read to its end). */
static inline FILE *sim_file_open_text(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)))
        return fopen(path, "rb");
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (f == NULL && fd >= 0) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return f;
}

/* fopen(path, "rb") of a regular file, *st its status, or NULL: a path that is no regular file
 * (then *st says what it is, errno EINVAL) or that does not open (errno says why, st_mode 0).
 * The type is read from the open descriptor, opened without waiting: a stat before an
 * fopen() let a FIFO swapped in between the two make the open wait for a writer forever. */
static inline FILE *sim_file_open_regular(const char *path, struct stat *st)
{
    st->st_mode = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    int e = EINVAL;
    FILE *f = NULL;
    if (fstat(fd, st) == 0 && S_ISREG(st->st_mode) && fcntl(fd, F_SETFL, 0) == 0)
        f = fdopen(fd, "rb");
    if (f == NULL) {
        e = S_ISREG(st->st_mode) ? errno : e;
        close(fd);
        errno = e;
    }
    return f;
}

/* The command's standard stream (1: standard output, 2: standard error) redirected to the
 * regular file of stat `st`, or -1: a report named as that file (/dev/stdout, /dev/fd/1, or the
 * file's own path) is written to the stream, where the command's own lines go, never replaced
 * (a --junit /dev/stdout with the output redirected to a file replaced it, and the check's
 * lines went to the file it had replaced: lost). */
static inline int sim_file_std_stream(const struct stat *st)
{
    for (int fd = 1; fd <= 2; fd++) {
        struct stat s;
        if (fstat(fd, &s) == 0 && S_ISREG(s.st_mode) && s.st_dev == st->st_dev &&
            s.st_ino == st->st_ino)
            return fd;
    }
    return -1;
}

/* The cap of a text input: 1 GiB. */
#define SIM_FILE_TEXT_CAP ((uint64_t)1 << 30)

/* The test hook: a lower cap in bytes (decimal digits, 1 to SIM_FILE_TEXT_CAP; any other value
 * is ignored), read once, the first time a cap is asked for. Tests feed a reader more than a
 * small cap; no user setting (a larger cap is not taken). */
#define SIM_FILE_TEXT_CAP_ENV "HETSIM_TEXT_CAP"

/* The most bytes hetsim reads of one text input: SIM_FILE_TEXT_CAP, or the test hook's. */
uint64_t sim_file_text_cap(void);

/* Why a text input past the cap is refused, to follow "FILE: ": "larger than 1 GiB, the limit
 * of a text input (a FIFO or a device that never ends?)" (the test hook's cap in bytes). */
const char *sim_file_cap_text(void);

/* strerror(e), but EFBIG (a reader stopped at the cap) is sim_file_cap_text(). */
const char *sim_file_strerror(int e);

/* Reads the open file f to its end into a malloc'd, zero-terminated buffer *out (its length,
 * without the zero, in *len). Returns 0, or an errno value with *out NULL: ENOMEM, EFBIG past
 * sim_file_text_cap() bytes (the buffer never holds more than the cap and two bytes), or the
 * read's error (EIO if it left none). Reading stops after the block that holds a NUL byte,
 * which the text then holds (its reader refuses it): /dev/zero ends there. */
int sim_file_read_all(FILE *f, char **out, size_t *len);

/* sim_file_read_all, but a regular file is read to its size at open, however large: the cap
 * keeps an input that may never end (a FIFO, a device) from growing without bound, and a
 * regular file ends at its size (a long run's metrics.csv may pass 1 GiB). Bytes appended while
 * it is read are left unread (the text is the file as it was at open, a row cut there refused by
 * its reader); a file cut meanwhile is read to its new end. Memory: the file's bytes, in blocks
 * as they are read (a sparse file of zeros stops at its first block). Anything else: as
 * sim_file_read_all. Used for the results files (sim_csv_read). */
int sim_file_read_sized(FILE *f, char **out, size_t *len);

/* A text file read line by line in blocks (a layer profile, a straggler trace): the bytes
 * counted against the cap of a text input and, when asked, hashed (FNV-1a 64 from
 * SIM_FNV_FILE_OFFSET). Reading 1 GiB of comment lines a byte at a time (getc) took 5.1 s of
 * processor time, 1.3 s in blocks (the hash of every byte bounds it); 1 GiB of blank lines 16.6 s,
 * 0.3 s. */
#define SIM_FILE_LINES_BLOCK 65536
typedef struct sim_file_lines {
    FILE *fp;
    uint64_t bytes, cap; /* bytes taken so far (a line's and its '\n'); the cap */
    uint64_t fnv;        /* FNV-1a 64 of the bytes taken, when `hash` */
    int hash;
    size_t at, end; /* the unread bytes of block[] */
    char block[SIM_FILE_LINES_BLOCK];
} sim_file_lines;

enum {
    SIM_LINE_END = 0,   /* the end of the file (or a read error: ferror), no byte of a line */
    SIM_LINE_OK = 1,    /* a line */
    SIM_LINE_CAP = -1,  /* the file goes past the cap of a text input */
    SIM_LINE_NUL = -2,  /* a NUL byte in the line (buf and *len: the bytes before it) */
    SIM_LINE_LONG = -3, /* more than room - 1 bytes before the line's end */
};

/* Starts reading `fp` (hashing its bytes when `hash`). */
void sim_file_lines_init(sim_file_lines *r, FILE *fp, int hash);

/* The next line into buf[room] without its '\n', NUL-terminated, its length in *len and in
 * *newline whether a '\n' ended it (the last line may have none). The bytes are taken one by
 * one as a getc loop would: the cap is checked first (a byte past it is SIM_LINE_CAP, even a
 * '\n'), then the line's end, then a NUL, then the room. Returns a SIM_LINE_ value. */
int sim_file_lines_next(sim_file_lines *r, char *buf, size_t room, size_t *len, int *newline);

/* Takes the empty lines ("\n" alone) that come next, up to the cap (the next line reports it);
 * returns how many: a run of blank lines is skipped at once (a trace of 1 GiB of them called the
 * line reader a billion times). */
size_t sim_file_lines_skip_empty(sim_file_lines *r);

/* `path` written the one way, the one rule of every path hetsim compares (an output with
 * a hetsim output: outputs/rundir.h; the files a scenario names, in its canonical form:
 * sim_scenario_canonical): without its "." components, repeated and trailing slashes ("A/."
 * and "./A/" are "A", "/." is "/", "./" is "."); ".." stays, for what it means depends on
 * links. Malloc'd; NULL when out of memory. */
char *sim_file_clean_path(const char *path);

#endif
