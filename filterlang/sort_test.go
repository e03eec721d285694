package filterlang

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func knownLogField(name string) bool {
	switch name {
	case "rowid", "id", "created", "updated", "level", "message":
		return true
	}
	return strings.HasPrefix(name, "data.") && len(name) > len("data.")
}

func TestParseSort(t *testing.T) {
	tests := []struct {
		name, src string
		want      []SortField
	}{
		{"empty", "", nil},
		{"one", "created", []SortField{{"created", false}}},
		{"desc", "-created", []SortField{{"created", true}}},
		{"plus", "+created", []SortField{{"created", false}}},
		{"url plus became space", " created", []SortField{{"created", false}}},
		{"several", "-level, created ,data.status", []SortField{{"level", true}, {"created", false}, {"data.status", false}}},
		{"random", "@random", []SortField{{RandomSort, false}}},
		{"random desc", "-@random", []SortField{{RandomSort, true}}},
		{"rowid", "-rowid", []SortField{{"rowid", true}}},
		{"max fields", "id,id,id,id,id,id,id,-id", []SortField{{"id", false}, {"id", false}, {"id", false}, {"id", false}, {"id", false}, {"id", false}, {"id", false}, {"id", true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSort(tt.src, knownLogField)
			if err != nil {
				t.Fatalf("ParseSort(%q) error %v", tt.src, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseSort(%q) = %v, want %v", tt.src, got, tt.want)
			}
		})
	}
}

func TestParseSortErrors(t *testing.T) {
	tests := []struct {
		name, src string
		offset    int
		msg       string
	}{
		{"trailing comma", "created,", 8, "empty sort field"},
		{"leading comma", ",created", 0, "empty sort field"},
		{"double comma", "data.b,,id", 7, "empty sort field"},
		{"blank", "  ", 2, "empty sort field"},
		{"sign only", "id, -", 4, `sort field "-" has no name`},
		{"double minus", "--created", 1, `sort field "--created" has more than one sign`},
		{"plus minus", "+-created", 1, `sort field "+-created" has more than one sign`},
		{"unknown", "id,nope", 3, `unknown sort field "nope"`},
		{"at rowid unknown here", "@rowid", 0, `unknown sort field "@rowid"`},
		{"macro", "@now", 0, `unknown sort field "@now"`},
		{"too many", "id,id,id,id,id,id,id,id,id", 24, "too many sort fields (max 8)"},
		{"too long", "data." + strings.Repeat("x", 251), 0, "sort field name longer than 255 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSort(tt.src, knownLogField)
			se, ok := errors.AsType[*SyntaxError](err)
			if !ok {
				t.Fatalf("ParseSort(%q) = %v, %v; want *SyntaxError", tt.src, got, err)
			}
			if se.Offset != tt.offset || se.Msg != tt.msg {
				t.Errorf("ParseSort(%q) error = offset %d %q, want offset %d %q", tt.src, se.Offset, se.Msg, tt.offset, tt.msg)
			}
		})
	}
	if _, err := ParseSort("data."+strings.Repeat("x", 250), knownLogField); err != nil {
		t.Errorf("255-byte name: %v", err)
	}
	if got, err := ParseSort("anything", nil); err != nil || len(got) != 1 {
		t.Errorf("nil known: %v, %v", got, err)
	}
}
