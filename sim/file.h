/* Files hetsim reads or writes that are no regular file: what one is, named in messages.
 *
 * A reader or a writer that refuses a file for its type (a FIFO it would wait on, a device
 * that never ends, a directory, a socket) says which type it met, through sim_file_kind:
 * one list of names, so that no message names a socket "a FIFO or a directory". Header only.
 */
#ifndef SIM_FILE_H
#define SIM_FILE_H

#include <sys/stat.h>

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

#endif
