package authn

import (
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"unicode/utf8"

	"strongbox/authn/validation"
)

// Field types strongbox stores values for. Password, file and autodate only
// appear as the built-in fields of auth collections.
const (
	FieldText     = "text"
	FieldNumber   = "number"
	FieldBool     = "bool"
	FieldEmail    = "email"
	FieldURL      = "url"
	FieldPassword = "password"
	FieldFile     = "file"
	FieldAutodate = "autodate"
)

// customFieldTypes are the types a collection may declare for its own fields.
var customFieldTypes = []string{FieldText, FieldNumber, FieldBool, FieldEmail, FieldURL}

// Field is one field of a collection. Only the options of its type are
// reported, with keys in alphabetical order as PocketBase reports them.
type Field struct {
	ID          string
	Name        string
	Type        string
	System      bool
	Hidden      bool
	Presentable bool
	Required    bool

	// text, password: length bounds in characters (0 = none); number: value bounds.
	Min, Max            float64
	Pattern             string // text, password
	AutogeneratePattern string // text
	PrimaryKey          bool   // text
	Cost                int    // password
	OnlyInt             bool   // number

	OnCreate, OnUpdate bool // autodate

	MaxSelect int      // file
	MaxSize   int64    // file
	MimeTypes []string // file
	Protected bool     // file
}

// MarshalJSON reports the field with the options of its type.
func (f Field) MarshalJSON() ([]byte, error) {
	m := map[string]any{
		"hidden": f.Hidden, "id": f.ID, "name": f.Name, "presentable": f.Presentable,
		"system": f.System, "type": f.Type,
	}
	switch f.Type {
	case FieldText:
		m["autogeneratePattern"], m["max"], m["min"], m["pattern"], m["primaryKey"], m["required"] =
			f.AutogeneratePattern, int64(f.Max), int64(f.Min), f.Pattern, f.PrimaryKey, f.Required
	case FieldPassword:
		m["cost"], m["max"], m["min"], m["pattern"], m["required"] = f.Cost, int64(f.Max), int64(f.Min), f.Pattern, f.Required
	case FieldNumber:
		m["max"], m["min"], m["onlyInt"], m["required"] = nullableNumber(f.Max), nullableNumber(f.Min), f.OnlyInt, f.Required
	case FieldEmail, FieldURL:
		m["exceptDomains"], m["onlyDomains"], m["required"] = nil, nil, f.Required
	case FieldBool:
		m["required"] = f.Required
	case FieldFile:
		m["maxSelect"], m["maxSize"], m["mimeTypes"], m["protected"], m["required"], m["thumbs"] =
			f.MaxSelect, f.MaxSize, f.MimeTypes, f.Protected, f.Required, nil
	case FieldAutodate:
		m["onCreate"], m["onUpdate"] = f.OnCreate, f.OnUpdate
	}
	return json.Marshal(m)
}

func nullableNumber(v float64) any {
	if v == 0 {
		return nil
	}
	return v
}

// UnmarshalJSON reads a field definition; unknown keys are ignored.
func (f *Field) UnmarshalJSON(b []byte) error {
	var raw struct {
		ID, Name, Type, Pattern, AutogeneratePattern      string
		System, Hidden, Presentable, Required, PrimaryKey bool
		OnlyInt, OnCreate, OnUpdate, Protected            bool
		Min, Max                                          *float64
		Cost, MaxSelect                                   int
		MaxSize                                           int64
		MimeTypes                                         []string
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*f = Field{
		ID: raw.ID, Name: raw.Name, Type: raw.Type, Pattern: raw.Pattern, AutogeneratePattern: raw.AutogeneratePattern,
		System: raw.System, Hidden: raw.Hidden, Presentable: raw.Presentable, Required: raw.Required,
		PrimaryKey: raw.PrimaryKey, OnlyInt: raw.OnlyInt, OnCreate: raw.OnCreate, OnUpdate: raw.OnUpdate,
		Protected: raw.Protected, Cost: raw.Cost, MaxSelect: raw.MaxSelect, MaxSize: raw.MaxSize, MimeTypes: raw.MimeTypes,
	}
	if raw.Min != nil {
		f.Min = *raw.Min
	}
	if raw.Max != nil {
		f.Max = *raw.Max
	}
	return nil
}

// Validation failures with PocketBase's codes and messages.
var (
	errRequired     = validation.Required()
	errEmail        = validation.IsEmail()
	errURL          = validation.IsURL()
	errNotUnique    = validation.NotUnique()
	errInvalidValue = validation.InvalidValue()
	errMismatch     = validation.ValuesMismatch()
	errInvalidOld   = validation.New(validation.CodeInvalidOldPassword, "Missing or invalid old password.")
	errFormat       = validation.InvalidFormat()
	errOnlyInt      = validation.New(validation.CodeOnlyIntConstraint, "Decimal numbers are not allowed.")
	errNoFiles      = validation.FileUnsupported()
)

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// normalize converts an input value for field f to its stored form, or
// returns the validation failure. JSON numbers arrive as float64 and form
// values as strings; both are accepted where PocketBase casts them.
func (f *Field) normalize(v any) (any, *validation.Error) {
	switch f.Type {
	case FieldText, FieldEmail, FieldURL:
		var s string
		switch x := v.(type) {
		case nil:
		case string:
			s = x
		case float64:
			s = fmtNum(x)
		case bool:
			s = strconv.FormatBool(x)
		default:
			return nil, errInvalidValue
		}
		return s, f.checkText(s)
	case FieldNumber:
		var n float64
		switch x := v.(type) {
		case nil:
		case float64:
			n = x
		case string:
			if x != "" {
				p, err := strconv.ParseFloat(x, 64)
				if err != nil {
					return nil, errInvalidValue
				}
				n = p
			}
		case bool:
			if x {
				n = 1
			}
		default:
			return nil, errInvalidValue
		}
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return nil, errInvalidValue
		}
		if f.Required && n == 0 {
			return n, errRequired
		}
		if f.OnlyInt && n != math.Trunc(n) {
			return n, errOnlyInt
		}
		if f.Min != 0 && n < f.Min {
			return n, validation.MinNumber(f.Min)
		}
		if f.Max != 0 && n > f.Max {
			return n, validation.MaxNumber(f.Max)
		}
		return n, nil
	case FieldBool:
		b, ok := toBool(v)
		if !ok {
			return nil, errInvalidValue
		}
		if f.Required && !b {
			return b, errRequired
		}
		return b, nil
	case FieldFile:
		if v == nil || v == "" {
			return "", nil
		}
		return nil, errNoFiles
	}
	return nil, errInvalidValue
}

func (f *Field) checkText(s string) *validation.Error {
	if s == "" {
		if f.Required {
			return errRequired
		}
		return nil
	}
	n := utf8.RuneCountInString(s)
	if f.Min > 0 && n < int(f.Min) {
		return validation.MinText(int(f.Min))
	}
	if f.Max > 0 && n > int(f.Max) {
		return validation.MaxText(int(f.Max))
	}
	if f.Pattern != "" {
		if re, err := regexp.Compile(f.Pattern); err == nil && !re.MatchString(s) {
			return errFormat
		}
	}
	switch f.Type {
	case FieldEmail:
		if !ValidEmail(s) {
			return errEmail
		}
	case FieldURL:
		if _, err := validation.HTTPURL(s); err != nil {
			return errURL
		}
	}
	return nil
}

// zero returns the stored value of an unset field of type f.Type.
func (f *Field) zero() any {
	switch f.Type {
	case FieldNumber:
		return float64(0)
	case FieldBool:
		return false
	}
	return ""
}

func toBool(v any) (bool, bool) {
	switch x := v.(type) {
	case nil:
		return false, true
	case bool:
		return x, true
	case string:
		if x == "" {
			return false, true
		}
		b, err := strconv.ParseBool(x)
		return b, err == nil
	case float64:
		return x != 0, true
	}
	return false, false
}
