package cmp

import (
	"slices"
	"syscall"
	"unsafe"
)

// readDir lists a directory's entries: false when it cannot be read or
// holds anything but directories and regular files. It reads the
// kernel's records (getdents64: struct linux_dirent64, include/linux/
// dirent.h) itself, with the names in one string: os.File.ReadDir makes
// an object and a string per entry, most of a cached call's allocations.
func readDir(dir string) ([]dirent, bool) {
	fd, err := openFD(dir, syscall.O_DIRECTORY)
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	// Records go straight into one buffer, reserved from the directory's
	// size (on ext4 the blocks its entries fill; less than the records on
	// some file systems, tmpfs among them), grown when it is short.
	size := int64(32 << 10)
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) == nil && st.Size > 0 {
		size = st.Size + 8<<10
	}
	raw := make([]byte, 0, size)
	for {
		if cap(raw)-len(raw) < 4<<10 {
			raw = slices.Grow(raw, cap(raw))
		}
		n, err := syscall.ReadDirent(fd, raw[len(raw):cap(raw)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		if n <= 0 {
			break
		}
		raw = raw[:len(raw)+n]
	}
	// d_ino (8 bytes), d_off (8), d_reclen (2), d_type (1), d_name (NUL
	// terminated, padded to d_reclen).
	const nameAt = 19
	names := unsafe.String(unsafe.SliceData(raw), len(raw))
	list := make([]dirent, 0, len(raw)/24)
	for rec := 0; rec+nameAt <= len(raw); {
		reclen := int(*(*uint16)(unsafe.Pointer(&raw[rec+16])))
		if reclen < nameAt || rec+reclen > len(raw) {
			return nil, false
		}
		name := names[rec+nameAt : rec+reclen]
		for i := 0; i < len(name); i++ {
			if name[i] == 0 {
				name = name[:i]
				break
			}
		}
		switch typ := raw[rec+18]; {
		case name == "." || name == "..":
		case typ == syscall.DT_DIR:
			list = append(list, dirent{name, true})
		case typ == syscall.DT_REG:
			list = append(list, dirent{name, false})
		case typ == syscall.DT_UNKNOWN:
			// The file system does not say: ask it (as os.ReadDir does).
			var st syscall.Stat_t
			if syscall.Lstat(dir+"/"+name, &st) != nil {
				return nil, false
			}
			switch st.Mode & syscall.S_IFMT {
			case syscall.S_IFDIR:
				list = append(list, dirent{name, true})
			case syscall.S_IFREG:
				list = append(list, dirent{name, false})
			default:
				return nil, false
			}
		default:
			return nil, false
		}
		rec += reclen
	}
	return list, true
}
