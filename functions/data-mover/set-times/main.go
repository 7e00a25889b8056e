// Command set-times sets files' access and modification times to the nanosecond, which Node.js
// cannot: its utimes takes a double of seconds, and libuv truncates that to microseconds. The data
// mover's file-mode restore (functions/data-mover/file-times.ts) starts one and streams it a
// record per path on stdin, fields NUL-terminated:
//
//	kind NUL path NUL atime-ns NUL mtime-ns NUL
//
// kind "f" follows a final symlink, "l" does not (a restored symlink's own times). Records are
// applied in order with utimensat(2). At the end of its input it prints "error <record> <reason>"
// for each record it could not apply, then "ok <records>", and exits 1 if any failed.
// Linux only; the standard library only, so it builds anywhere Go does, with no module downloads.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// Linux's values on every architecture (include/uapi/linux/fcntl.h); package syscall lacks them.
const (
	atFdcwd           = -100
	atSymlinkNofollow = 0x100
)

func main() {
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	out := bufio.NewWriter(os.Stdout)
	records, failed := 0, 0
	for {
		kind, err := field(in)
		if err != nil {
			break // end of input
		}
		if err := apply(in, kind); err != nil {
			failed++
			fmt.Fprintf(out, "error %d %s\n", records, err)
		}
		records++
	}
	fmt.Fprintf(out, "ok %d\n", records)
	out.Flush()
	if failed > 0 {
		os.Exit(1)
	}
}

func field(in *bufio.Reader) ([]byte, error) {
	b, err := in.ReadBytes(0)
	if err != nil {
		return nil, err
	}
	return b[:len(b)-1], nil
}

func apply(in *bufio.Reader, kind []byte) error {
	path, err := field(in)
	if err != nil {
		return fmt.Errorf("truncated record: %v", err)
	}
	var ns [2]int64
	for i := range ns {
		text, err := field(in)
		if err != nil {
			return fmt.Errorf("truncated record: %v", err)
		}
		if ns[i], err = strconv.ParseInt(string(text), 10, 64); err != nil {
			return fmt.Errorf("%q: bad time %q", path, text)
		}
	}
	flags := 0
	if string(kind) == "l" {
		flags = atSymlinkNofollow
	}
	p, err := syscall.BytePtrFromString(string(path))
	if err != nil {
		return fmt.Errorf("%q: %v", path, err)
	}
	ts := [2]syscall.Timespec{syscall.NsecToTimespec(ns[0]), syscall.NsecToTimespec(ns[1])}
	dirfd := atFdcwd
	_, _, errno := syscall.Syscall6(syscall.SYS_UTIMENSAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)),
		uintptr(unsafe.Pointer(&ts[0])), uintptr(flags), 0, 0)
	if errno != 0 {
		return fmt.Errorf("%q: %v", path, errno)
	}
	return nil
}
