package logstore

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"strongbox/filterlang"
)

// This file binds the filter and sort fields of the logs API (interface
// §4.3) to the index:
//
//	id, created, updated (= created), level, message   columns
//	data                                               the data object as JSON text (filter only)
//	data.<path>                                        JSON attributes
//	rowid                                              insertion sequence (sort; stats filter)
//
// Request attributes (data.status, data.method …) are read straight from
// their typed columns; only other logs' attributes come from a map.

// msField is the hidden numeric twin of created (Unix ms) that comparisons
// of created with a string literal are rewritten to (see rewriteTimes).
// The scanner never produces an identifier with a space, so filters cannot
// name it.
const msField = "created ms"

// reqKeys are the data keys of a request log, alphabetically.
var reqKeys = map[string]bool{
	"auth": true, "authId": true, "details": true, "error": true, "execTime": true,
	"method": true, "referer": true, "remoteIP": true, "status": true, "type": true,
	"url": true, "userAgent": true, "userIP": true,
}

// reqStrCols maps the string-valued request keys to their columns.
var reqStrCols = map[string]strCol{
	"auth": colAuth, "method": colMethod, "referer": colReferer, "remoteIP": colRemoteIP,
	"url": colURL, "userAgent": colUserAgent, "userIP": colUserIP,
}

type field = filterlang.Field[row]

// resolver returns the filter resolver over x; rowid is allowed only when
// withRowid is set (the stats filter). The message field derives messages
// into ms, so the resolved predicate is for one goroutine (see msgScratch).
func resolver(x *index, withRowid bool, ms *msgScratch) filterlang.Resolver[row] {
	return func(name string) (field, bool) {
		switch name {
		case "id":
			return field{Type: filterlang.TypeString, Str: func(r row) (string, bool) {
				return x.id(r), true
			}}, true
		case "created", "updated":
			return field{Type: filterlang.TypeString, Str: func(r row) (string, bool) {
				return formatMs(r.c.createdAt(r.i)), true
			}}, true
		case msField:
			return field{Type: filterlang.TypeNumber, Num: func(r row) (float64, bool) {
				return float64(r.c.createdAt(r.i)), true
			}}, true
		case "level":
			return field{Type: filterlang.TypeNumber, Num: func(r row) (float64, bool) {
				return float64(r.c.levelAt(r.i)), true
			}}, true
		case "message":
			return field{Type: filterlang.TypeString, Str: func(r row) (string, bool) {
				return ms.message(x, r), true
			}}, true
		case "data":
			return field{Type: filterlang.TypeString, Str: func(r row) (string, bool) {
				return x.dataJSON(r), true
			}}, true
		case "rowid":
			if withRowid {
				return field{Type: filterlang.TypeNumber, Num: func(r row) (float64, bool) {
					return float64(r.seq()), true
				}}, true
			}
			return field{}, false
		}
		if path, ok := strings.CutPrefix(name, "data."); ok && path != "" {
			return x.dataField(path), true
		}
		return field{}, false
	}
}

// dataField binds data.<path>.
func (x *index) dataField(path string) field {
	keys := strings.Split(path, ".")
	top := keys[0]
	seen := x.attrKinds[top] // kinds of this key among other logs
	if len(keys) == 1 {
		switch top {
		case "status", "execTime":
			if seen&^seenNumber != 0 {
				break
			}
			// Attribute of another log: a number or a boolean, else NULL.
			other := func(r row) (float64, bool) {
				switch v := otherAttr(r, keys).(type) {
				case float64:
					return v, true
				case bool:
					return boolNum(v), true
				}
				return 0, false
			}
			// With only request logs in the store the column alone will do,
			// a branch less per row (the common case).
			var get func(r row) (float64, bool)
			switch exec := top == "execTime"; {
			case exec && x.others == 0:
				get = func(r row) (float64, bool) { return r.c.execAt(r.i), true }
			case exec:
				get = func(r row) (float64, bool) {
					if r.c.flagsAt(r.i)&rowOther == 0 {
						return r.c.execAt(r.i), true
					}
					return other(r)
				}
			case x.others == 0:
				get = func(r row) (float64, bool) { return float64(r.c.statusAt(r.i)), true }
			default:
				get = func(r row) (float64, bool) {
					if r.c.flagsAt(r.i)&rowOther == 0 {
						return float64(r.c.statusAt(r.i)), true
					}
					return other(r)
				}
			}
			return field{Type: filterlang.TypeNumber, JSON: true, Num: get}
		case "auth", "method", "referer", "url", "userAgent", "remoteIP", "userIP":
			if seen&^seenString != 0 {
				break
			}
			col := reqStrCols[top]
			ip := top == "remoteIP" || top == "userIP"
			if x.others == 0 && !ip {
				return field{Type: filterlang.TypeString, JSON: true, Str: func(r row) (string, bool) {
					return x.dict.strs[r.c.strAt(col, r.i)], true
				}}
			}
			return field{Type: filterlang.TypeString, JSON: true, Str: func(r row) (string, bool) {
				c := r.c
				if c.flagsAt(r.i)&rowOther == 0 {
					if ip && c.strAt(colRemoteIP, r.i) == 0 && c.strAt(colUserIP, r.i) == 0 {
						return "", false // logIP off: no IP keys
					}
					return x.dict.strs[c.strAt(col, r.i)], true
				}
				s, ok := otherAttr(r, keys).(string)
				return s, ok
			}}
		case "type", "authId", "error":
			if seen&^seenString != 0 {
				break
			}
			return field{Type: filterlang.TypeString, JSON: true, Str: func(r row) (string, bool) {
				if r.c.flagsAt(r.i)&rowOther == 0 {
					return x.reqString(r, top)
				}
				s, ok := otherAttr(r, keys).(string)
				return s, ok
			}}
		}
	}
	return field{Type: filterlang.TypeDynamic, JSON: true, Dyn: func(r row) filterlang.Value {
		v, _ := x.attr(r, keys)
		return toValue(v)
	}}
}

func boolNum(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// reqString returns the string-valued request attribute key of r; false
// when the attribute is absent.
func (x *index) reqString(r row, key string) (string, bool) {
	c, i := r.c, r.i
	switch key {
	case "type":
		return "request", true
	case "authId":
		if c.flagsAt(i)&flagAuthID != 0 {
			return x.dict.strs[r.extra().authID], true
		}
	case "error":
		if c.flagsAt(i)&flagError != 0 {
			return x.dict.strs[r.extra().errMsg], true
		}
	case "remoteIP", "userIP":
		if c.strAt(colRemoteIP, i) == 0 && c.strAt(colUserIP, i) == 0 {
			return "", false
		}
		return x.dict.strs[c.strAt(reqStrCols[key], i)], true
	default:
		if col, ok := reqStrCols[key]; ok {
			return x.dict.strs[c.strAt(col, i)], true
		}
	}
	return "", false
}

// attr returns the value at data.<keys...> of row r as a generic JSON value.
func (x *index) attr(r row, keys []string) (any, bool) {
	if r.c.flagsAt(r.i)&rowOther != 0 {
		return lookupPath(otherAttrs(r), keys)
	}
	top := keys[0]
	var v any
	switch top {
	case "status":
		v = float64(r.c.statusAt(r.i))
	case "execTime":
		v = r.c.execAt(r.i)
	case "details":
		if r.c.flagsAt(r.i)&flagError == 0 {
			return nil, false
		}
		v = decodeDetails(x.dict.strs[r.extra().details])
	default:
		s, ok := x.reqString(r, top)
		if !ok {
			return nil, false
		}
		v = s
	}
	if len(keys) == 1 {
		return v, true
	}
	return lookupPath(v, keys[1:])
}

func otherAttrs(r row) any {
	if a := r.c.attrs[uint16(r.i)]; a != nil {
		return a
	}
	return nil
}

// otherAttr returns the attribute of another log (no JSON decoding: the
// attributes are kept decoded).
func otherAttr(r row, keys []string) any {
	v, _ := lookupPath(otherAttrs(r), keys)
	return v
}

// lookupPath walks a JSON value along keys; numeric keys index arrays, as
// JSON_EXTRACT's $.items[0] for data.items.0.
func lookupPath(v any, keys []string) (any, bool) {
	for _, k := range keys {
		switch t := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = t[k]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(t) || k[0] == '+' {
				return nil, false
			}
			v = t[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// decodeDetails decodes the stored JSON text of a request's details.
func decodeDetails(s string) any {
	if s == "" {
		return nil
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	return v
}

// toValue converts a generic JSON value to a filterlang.Value.
func toValue(v any) filterlang.Value {
	switch t := v.(type) {
	case float64:
		return filterlang.Value{Kind: filterlang.KindNumber, Num: t}
	case bool:
		return filterlang.Value{Kind: filterlang.KindNumber, Num: boolNum(t)}
	case string:
		return filterlang.Value{Kind: filterlang.KindString, Str: t}
	case []any:
		arr := make([]filterlang.Value, len(t))
		for i, e := range t {
			arr[i] = toValue(e)
		}
		return filterlang.Value{Kind: filterlang.KindArray, Arr: arr, Str: jsonText(t)}
	case map[string]any:
		return filterlang.Value{Kind: filterlang.KindObject, Str: jsonText(t)}
	}
	return filterlang.Value{}
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// memEntry rebuilds the entry of row r from the index alone (without its id
// and with data only as far as the index holds it, which is all of it).
func (x *index) memEntry(r row) Entry {
	e := x.memData(r)
	e.Message = x.message(r)
	return e
}

// memData is memEntry without the message.
func (x *index) memData(r row) Entry {
	c, i := r.c, r.i
	e := Entry{
		Created: fromMs(c.createdAt(i)),
		Level:   int(c.levelAt(i)),
	}
	if c.flagsAt(i)&rowOther != 0 {
		if a, ok := otherAttrs(r).(map[string]any); ok {
			e.Attrs = a
		}
		return e
	}
	s := func(col strCol) string { return x.dict.strs[c.strAt(col, i)] }
	e.Request = &Request{
		Auth: s(colAuth), ExecTime: c.execAt(i), Method: s(colMethod), Referer: s(colReferer),
		RemoteIP: s(colRemoteIP), Status: int(c.statusAt(i)), URL: s(colURL),
		UserAgent: s(colUserAgent), UserIP: s(colUserIP),
	}
	if ex := r.extra(); ex != nil {
		e.Request.AuthID = x.dict.strs[ex.authID]
		if c.flagsAt(i)&flagError != 0 {
			e.Request.Error = x.dict.strs[ex.errMsg]
			e.Request.Details = decodeDetails(x.dict.strs[ex.details])
		}
	}
	return e
}

// dataJSON returns the data object of row r as JSON text.
func (x *index) dataJSON(r row) string {
	b, err := x.memData(r).appendData(nil)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// rewriteTimes replaces comparisons of created/updated with a string (or a
// date macro) by equivalent comparisons of the hidden millisecond column, so
// that `created > "2024-01-01"` compares integers instead of formatting
// every row's time. Stored times all have the fixed-width form
// "YYYY-MM-DD HH:MM:SS.mmmZ", whose string order is time order, so the rows
// satisfying `created OP "text"` always form a range of times; its bound is
// found by binary search over the storable times.
func rewriteTimes(e filterlang.Expr, now time.Time) filterlang.Expr {
	switch t := e.(type) {
	case *filterlang.Binary:
		x, y := rewriteTimes(t.X, now), rewriteTimes(t.Y, now)
		if x == t.X && y == t.Y {
			return e
		}
		return &filterlang.Binary{Op: t.Op, X: x, Y: y, OpPos: t.OpPos}
	case *filterlang.Compare:
		if r := rewriteCompare(t, now); r != nil {
			return r
		}
	}
	return e
}

func rewriteCompare(c *filterlang.Compare, now time.Time) filterlang.Expr {
	op := c.Op
	field, lit := c.Left, c.Right
	if !isTimeField(field) {
		field, lit = lit, field
		switch op {
		case filterlang.Lt:
			op = filterlang.Gt
		case filterlang.Lte:
			op = filterlang.Gte
		case filterlang.Gt:
			op = filterlang.Lt
		case filterlang.Gte:
			op = filterlang.Lte
		}
	}
	if !isTimeField(field) {
		return nil
	}
	var text string
	switch l := lit.(type) {
	case filterlang.Str:
		text = l.Value
	case filterlang.Ident:
		var ok bool
		if text, ok = filterlang.DateMacro(l.Name, now); !ok {
			return nil
		}
	default:
		return nil
	}
	pos := field.Pos()
	ms := func(op filterlang.Op, v int64) filterlang.Expr {
		return &filterlang.Compare{Op: op, Left: filterlang.Ident{Name: msField, NamePos: pos},
			Right: filterlang.Num{Value: float64(v), ValuePos: lit.Pos()}, OpPos: c.OpPos}
	}
	// geq is the first time whose text is >= text, gt the first whose text
	// is > text (maxCreatedMs+1 when none).
	geq := firstTime(func(s string) bool { return s >= text })
	gt := firstTime(func(s string) bool { return s > text })
	switch op {
	case filterlang.Lt:
		return ms(filterlang.Lt, geq)
	case filterlang.Lte:
		return ms(filterlang.Lt, gt)
	case filterlang.Gt:
		return ms(filterlang.Gte, gt)
	case filterlang.Gte:
		return ms(filterlang.Gte, geq)
	case filterlang.Eq, filterlang.Neq:
		if geq == gt { // no time has exactly this text
			return constExpr(op == filterlang.Neq, pos)
		}
		return ms(op, geq)
	}
	return nil
}

func isTimeField(o filterlang.Operand) bool {
	id, ok := o.(filterlang.Ident)
	return ok && (id.Name == "created" || id.Name == "updated")
}

// constExpr returns an always-true or always-false comparison.
func constExpr(b bool, pos int) filterlang.Expr {
	y := 0.0
	if b {
		y = 1
	}
	return &filterlang.Compare{Op: filterlang.Eq,
		Left: filterlang.Num{Value: 1, ValuePos: pos}, Right: filterlang.Num{Value: y, ValuePos: pos}}
}

// firstTime returns the smallest storable time (Unix ms) whose text
// satisfies the monotone predicate ok, or maxCreatedMs+1.
func firstTime(ok func(string) bool) int64 {
	lo, hi := int64(minCreatedMs), int64(maxCreatedMs)+1
	buf := make([]byte, 0, 32)
	for lo < hi {
		mid := lo + (hi-lo)/2
		buf = appendTime(buf[:0], mid)
		if ok(string(buf)) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}
