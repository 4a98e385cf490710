//go:build !linux

package cmp

// readDir lists a directory's entries: false when it cannot be read or
// holds anything but directories and regular files.
func readDir(dir string) ([]dirent, bool) {
	f, err := openFile(dir)
	if err != nil {
		return nil, false
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return nil, false
	}
	list := make([]dirent, len(ents))
	for i, e := range ents {
		switch t := e.Type(); {
		case t.IsDir():
			list[i] = dirent{e.Name(), true}
		case t.IsRegular():
			list[i] = dirent{e.Name(), false}
		default:
			return nil, false
		}
	}
	return list, true
}
