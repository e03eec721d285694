package sqlite

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Table is a table of sqlite_schema.
type Table struct {
	Name string
	SQL  string // the CREATE TABLE statement as sqlite_schema stores it
	// RootPage is the page of the table's b-tree root (0 for a virtual
	// table).
	RootPage     uint32
	WithoutRowID bool
	Columns      []Column

	schemaErr error // SQL the parser cannot read: Rows fails with it
}

// Column is a column of a table, as its CREATE TABLE statement declares it.
type Column struct {
	Name string
	// Default is the value of the DEFAULT literal (nil, int64, float64,
	// string or []byte); nil when there is none or it is an expression.
	Default any
	// RowIDAlias: the column is an INTEGER PRIMARY KEY, whose value is
	// the rowid.
	RowIDAlias bool

	virtual bool // a VIRTUAL generated column: not stored in records
	typ     string
}

// tableDef is what parseCreateTable finds in a CREATE TABLE statement.
type tableDef struct {
	Name         string
	Columns      []Column
	WithoutRowID bool
}

// Token kinds of the tokenizer.
const (
	tokIdent  = iota // a bare word (keyword or name)
	tokQuoted        // "name", `name` or [name]: a name
	tokString        // 'text'
	tokNumber
	tokBlob  // X'hex'
	tokPunct // one character: ( ) , . ; + - and the rest
)

type token struct {
	kind int
	text string // unquoted for tokQuoted and tokString
}

var errSyntax = errors.New("syntax")

// maxSchemaSQL bounds the statement the parser reads (SQLite's own
// default SQL length limit is 1,000,000,000; real schemas are a few KB).
const maxSchemaSQL = 1 << 20

// tokenize splits SQL into tokens, dropping whitespace and comments.
func tokenize(sql string) ([]token, error) {
	if len(sql) > maxSchemaSQL {
		return nil, fmt.Errorf("%w: the statement is %d bytes, over %d", errSyntax, len(sql), maxSchemaSQL)
	}
	var toks []token
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case strings.HasPrefix(sql[i:], "--"):
			if j := strings.IndexByte(sql[i:], '\n'); j >= 0 {
				i += j + 1
			} else {
				i = len(sql)
			}
		case strings.HasPrefix(sql[i:], "/*"):
			if j := strings.Index(sql[i+2:], "*/"); j >= 0 {
				i += j + 4
			} else {
				i = len(sql)
			}
		case c == '"' || c == '`' || c == '\'' || c == '[':
			t, n, err := quoted(sql[i:])
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			i += n
		case (c == 'x' || c == 'X') && i+1 < len(sql) && sql[i+1] == '\'':
			t, n, err := quoted(sql[i+1:])
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{tokBlob, t.text})
			i += n + 1
		case isDigit(c) || c == '.' && i+1 < len(sql) && isDigit(sql[i+1]):
			n := numberLen(sql[i:])
			toks = append(toks, token{tokNumber, sql[i : i+n]})
			i += n
		case isIdentStart(c):
			j := i + 1
			for j < len(sql) && (isIdentStart(sql[j]) || isDigit(sql[j]) || sql[j] == '$') {
				j++
			}
			toks = append(toks, token{tokIdent, sql[i:j]})
			i = j
		default:
			toks = append(toks, token{tokPunct, sql[i : i+1]})
			i++
		}
	}
	return toks, nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isIdentStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}

// quoted reads a quoted token at the start of s: "x", `x` and 'x' double
// their quote to escape it; [x] has no escape.
func quoted(s string) (token, int, error) {
	open := s[0]
	closing, kind := open, tokQuoted
	switch open {
	case '[':
		closing = ']'
	case '\'':
		kind = tokString
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != closing {
			b.WriteByte(s[i])
			continue
		}
		if closing != ']' && i+1 < len(s) && s[i+1] == closing {
			b.WriteByte(closing)
			i++
			continue
		}
		return token{kind, b.String()}, i + 1, nil
	}
	return token{}, 0, fmt.Errorf("%w: unterminated %c", errSyntax, open)
}

// numberLen is the length of the numeric literal at the start of s:
// hexadecimal 0x..., or digits with an optional fraction and exponent.
func numberLen(s string) int {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		i := 2
		for i < len(s) && strings.IndexByte("0123456789abcdefABCDEF", s[i]) >= 0 {
			i++
		}
		return i
	}
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			i = j
		}
	}
	return i
}

func (t token) is(keyword string) bool {
	return t.kind == tokIdent && strings.EqualFold(t.text, keyword)
}

// parseCreateTable reads the table name, the columns (names, DEFAULT
// literals, INTEGER PRIMARY KEY) and WITHOUT ROWID from a CREATE TABLE
// statement; table constraints are skipped.
func parseCreateTable(sql string) (tableDef, error) {
	toks, err := tokenize(sql)
	if err != nil {
		return tableDef{}, err
	}
	i := 0
	expect := func(words ...string) bool {
		for _, w := range words {
			if i >= len(toks) || !toks[i].is(w) {
				return false
			}
			i++
		}
		return true
	}
	if !expect("CREATE") {
		return tableDef{}, fmt.Errorf("%w: not a CREATE TABLE statement", errSyntax)
	}
	if !expect("TEMP") {
		expect("TEMPORARY")
	}
	if !expect("TABLE") {
		return tableDef{}, fmt.Errorf("%w: not a CREATE TABLE statement", errSyntax)
	}
	if i < len(toks) && toks[i].is("IF") && !expect("IF", "NOT", "EXISTS") {
		return tableDef{}, fmt.Errorf("%w: IF without NOT EXISTS", errSyntax)
	}
	var def tableDef
	if i < len(toks) && isName(toks[i]) {
		def.Name = toks[i].text
		i++
	}
	if i+1 < len(toks) && toks[i].text == "." && toks[i].kind == tokPunct && isName(toks[i+1]) {
		def.Name = toks[i+1].text
		i += 2
	}
	if def.Name == "" || i >= len(toks) || toks[i].kind != tokPunct || toks[i].text != "(" {
		return tableDef{}, fmt.Errorf("%w: no table name and column list", errSyntax)
	}
	items, rest, err := splitItems(toks[i+1:])
	if err != nil {
		return tableDef{}, err
	}
	var pkCols []string
	for _, item := range items {
		if isTableConstraint(item) {
			pkCols = append(pkCols, primaryKeyColumns(item)...)
			continue
		}
		col, err := parseColumn(item)
		if err != nil {
			return tableDef{}, err
		}
		def.Columns = append(def.Columns, col)
	}
	for j := 0; j+1 < len(rest); j++ {
		if rest[j].is("WITHOUT") && rest[j+1].is("ROWID") {
			def.WithoutRowID = true
		}
	}
	def.markRowIDAlias(pkCols)
	if len(def.Columns) == 0 {
		return tableDef{}, fmt.Errorf("%w: no columns", errSyntax)
	}
	return def, nil
}

func isName(t token) bool {
	return t.kind == tokIdent || t.kind == tokQuoted || t.kind == tokString
}

// splitItems splits the tokens after the opening parenthesis into the
// comma-separated items at depth 0, up to the closing parenthesis, and
// returns the tokens after it.
func splitItems(toks []token) (items [][]token, rest []token, err error) {
	depth, start := 0, 0
	for i, t := range toks {
		if t.kind != tokPunct {
			continue
		}
		switch t.text {
		case "(":
			depth++
		case ")":
			if depth == 0 {
				return append(items, toks[start:i]), toks[i+1:], nil
			}
			depth--
		case ",":
			if depth == 0 {
				items = append(items, toks[start:i])
				start = i + 1
			}
		}
	}
	return nil, nil, fmt.Errorf("%w: the column list is not closed", errSyntax)
}

func isTableConstraint(item []token) bool {
	if len(item) == 0 {
		return true
	}
	for _, w := range []string{"CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"} {
		if item[0].is(w) {
			return true
		}
	}
	return false
}

// primaryKeyColumns returns the columns of a table constraint
// PRIMARY KEY (a, b, ...).
func primaryKeyColumns(item []token) []string {
	for j := 0; j+2 < len(item); j++ {
		if !item[j].is("PRIMARY") || !item[j+1].is("KEY") || item[j+2].text != "(" {
			continue
		}
		inner, _, err := splitItems(item[j+3:])
		if err != nil {
			return nil
		}
		var cols []string
		for _, c := range inner {
			if len(c) > 0 && isName(c[0]) {
				cols = append(cols, c[0].text)
			}
		}
		return cols
	}
	return nil
}

// columnKeywords end a column's type name: the start of a constraint.
var columnKeywords = []string{"CONSTRAINT", "PRIMARY", "NOT", "NULL", "UNIQUE", "CHECK", "DEFAULT", "COLLATE", "REFERENCES", "GENERATED", "AS"}

func isColumnKeyword(t token) bool {
	for _, w := range columnKeywords {
		if t.is(w) {
			return true
		}
	}
	return false
}

// parseColumn reads a column definition: its name, type name and
// constraints, of which it keeps DEFAULT, PRIMARY KEY and AS (generated).
func parseColumn(item []token) (Column, error) {
	if !isName(item[0]) {
		return Column{}, fmt.Errorf("%w: a column definition starts with %q", errSyntax, item[0].text)
	}
	col := Column{Name: item[0].text}
	i := 1
	var typ []string
	for i < len(item) && !isColumnKeyword(item[i]) {
		if item[i].text == "(" && item[i].kind == tokPunct {
			j := skipParens(item, i)
			for _, t := range item[i:j] {
				typ = append(typ, t.text)
			}
			i = j
			continue
		}
		typ = append(typ, item[i].text)
		i++
	}
	col.typ = strings.Join(typ, " ")
	pk, desc, generated, stored := false, false, false, false
	for i < len(item) {
		t := item[i]
		switch {
		case t.text == "(" && t.kind == tokPunct:
			i = skipParens(item, i)
			continue
		case t.is("PRIMARY") && i+1 < len(item) && item[i+1].is("KEY"):
			pk = true
			desc = i+2 < len(item) && item[i+2].is("DESC")
			i += 2
			continue
		case t.is("DEFAULT"):
			v, n, err := parseDefault(item[i+1:])
			if err != nil {
				return Column{}, fmt.Errorf("column %q: %w", col.Name, err)
			}
			col.Default = v
			i += 1 + n
			continue
		case t.is("AS"):
			generated = true
		case t.is("STORED"):
			stored = true
		}
		i++
	}
	col.virtual = generated && !stored
	col.RowIDAlias = pk && !desc && strings.EqualFold(col.typ, "INTEGER")
	return col, nil
}

// skipParens returns the index after the parenthesis that closes the
// one at toks[i] (or len(toks) when it is not closed).
func skipParens(toks []token, i int) int {
	depth := 0
	for ; i < len(toks); i++ {
		if toks[i].kind != tokPunct {
			continue
		}
		switch toks[i].text {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return i
}

// parseDefault reads the literal after DEFAULT and returns its value and
// the number of tokens it spans. An expression in parentheses (and the
// CURRENT_* keywords, which SQLite evaluates on insert) gives nil.
func parseDefault(toks []token) (any, int, error) {
	if len(toks) == 0 {
		return nil, 0, fmt.Errorf("%w: DEFAULT without a value", errSyntax)
	}
	t := toks[0]
	switch t.kind {
	case tokString, tokQuoted:
		// SQLite reads a "double-quoted" DEFAULT as a string literal
		// when no column has that name, which PocketBase relies on
		// (DEFAULT "base").
		return t.text, 1, nil
	case tokNumber:
		v, err := number(t.text, false)
		return v, 1, err
	case tokBlob:
		b, err := hex.DecodeString(t.text)
		if err != nil {
			return nil, 0, fmt.Errorf("%w: blob literal X'%s'", errSyntax, t.text)
		}
		return b, 1, nil
	case tokPunct:
		if t.text == "(" {
			return nil, skipParens(toks, 0), nil
		}
		if (t.text == "-" || t.text == "+") && len(toks) > 1 && toks[1].kind == tokNumber {
			v, err := number(toks[1].text, t.text == "-")
			return v, 2, err
		}
		return nil, 0, fmt.Errorf("%w: DEFAULT %s", errSyntax, t.text)
	}
	switch {
	case t.is("NULL"), t.is("CURRENT_TIME"), t.is("CURRENT_DATE"), t.is("CURRENT_TIMESTAMP"):
		return nil, 1, nil
	case t.is("TRUE"):
		return int64(1), 1, nil
	case t.is("FALSE"):
		return int64(0), 1, nil
	}
	// SQLite takes a bare word after DEFAULT as a string.
	return t.text, 1, nil
}

// number converts a numeric literal as SQLite does: an integer when it
// fits in 64 bits (hexadecimal as the two's complement of its bits),
// else a real.
func number(s string, neg bool) (any, error) {
	if len(s) > 2 && (s[1] == 'x' || s[1] == 'X') {
		u, err := strconv.ParseUint(s[2:], 16, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: hexadecimal literal %s", errSyntax, s)
		}
		if neg {
			return -int64(u), nil
		}
		return int64(u), nil
	}
	if neg {
		s = "-" + s
	}
	if !strings.ContainsAny(s, ".eE") {
		if v, err := strconv.ParseInt(s, 10, 64); err == nil {
			return v, nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, fmt.Errorf("%w: numeric literal %s", errSyntax, s)
	}
	return f, nil
}

// markRowIDAlias marks the INTEGER column that a table constraint
// PRIMARY KEY (col) names alone as the rowid alias. A WITHOUT ROWID table
// has no rowid, so no alias.
func (def *tableDef) markRowIDAlias(pkCols []string) {
	if def.WithoutRowID {
		for i := range def.Columns {
			def.Columns[i].RowIDAlias = false
		}
		return
	}
	if len(pkCols) != 1 {
		return
	}
	for i, c := range def.Columns {
		if equalFoldASCII(c.Name, pkCols[0]) && strings.EqualFold(c.typ, "INTEGER") {
			def.Columns[i].RowIDAlias = true
		}
	}
}
