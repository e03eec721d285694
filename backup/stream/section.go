package stream

import "strongbox/logstore/journal"

// FromSection returns the File of a journal's section, named name.
func FromSection(name string, sec *journal.Section) File {
	f := File{Name: name, Size: sec.Size, Ident: sec.Ident, Data: sec}
	for _, m := range sec.Marks {
		f.Marks = append(f.Marks, Mark{End: m.End, Time: m.Time, Coarse: m.Coarse})
	}
	if sec.Prior != nil {
		p := FromSection(name, sec.Prior)
		f.Prior = &p
	}
	return f
}
