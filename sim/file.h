/* Files hetsim reads or writes that are no regular file: what one is, named in messages; and
 * the one cap on the bytes of a text input.
 *
 * A reader or a writer that refuses a file for its type (a FIFO it would wait on, a device
 * that never ends, a directory, a socket) says which type it met, through sim_file_kind:
 * one list of names, so that no message names a socket "a FIFO or a directory". A text file
 * read whole is opened through sim_file_open_text, which never waits on a device.
 *
 * Every text input hetsim reads whole (a scenario, a sweep file and its base, `report
 * --names`, a --style copy, a results file, a golden's JSON: sim_file_read_all) or line by
 * line (a layer profile, a straggler trace) stops past sim_file_text_cap() bytes (1 GiB),
 * refused with the file and the cap (sim_file_cap_text): a FIFO fed by `yes` grew the
 * scenario reader's buffer without bound (7.4 GB in 32 s), and endless comment lines of a
 * profile were read forever. The cap is a count of bytes, not of lines; a profile and a trace
 * keep their own row limits. Binary inputs (IDX, gzip) stop at the sizes their headers give,
 * LIBSVM data is refused unless a regular file (it is read twice). Implemented in sim/file.c.
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

#endif
