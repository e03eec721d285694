// Package filterlang implements the query languages of the API: filter
// expressions (the `filter` parameter), sort expressions (`sort`) and
// response projections (`fields`), following the interface document
// (PocketBase v0.31.0's interface specification, §4.1, §4.3, §4.4) and the behaviour
// of PocketBase v0.31.0, except where noted as stricter.
//
// A filter is parsed once with Parse, which checks its syntax and limits,
// and compiled with Compile against a Resolver that declares the fields an
// entry type exposes. The result is a Predicate: a tree of closures
// specialised per operator and field type, which reads fields through the
// resolver's getters with no reflection, no map lookups and no allocations.
// CompileSelector compiles the same filter into a Selector, which filters a
// batch of entries one comparison at a time: the faster form when there
// are many entries to test.
//
// # Filter grammar
//
// In EBNF (ISO 14977 style, with regular-expression shorthands in the
// lexical part):
//
//	filter     = or ;
//	or         = and { "||" and } ;
//	and        = unary { "&&" unary } ;
//	unary      = "(" or ")" | comparison ;
//	comparison = operand operator operand ;
//	operand    = identifier | number | string ;
//	operator   = [ "?" ] ( "=" | "!=" | "<" | "<=" | ">" | ">=" | "~" | "!~" ) ;
//
//	identifier = [A-Za-z_@#] [A-Za-z0-9_.:]*  (not ending in "." or ":",
//	             and not a lone "@", "#" or "_") ;
//	number     = "-"? [0-9]+ ( "." [0-9]+ )? ;
//	string     = "'" ( "\'" | [^'] )* "'" | '"' ( '\"' | [^"] )* '"' ;
//
// && binds tighter than ||, and both associate to the left. Space, tab,
// newline and carriage return may appear between any two tokens, and so
// may a comment: "//" up to the end of the line. The maximal run of the
// characters = ! < > ~ ? forms one operator token, so "==" and "<>" are
// invalid rather than two tokens; likewise a run of & and | must be exactly
// "&&" or "||". Inside a string the only escape is a backslash before the
// string's own quote; every other backslash stands for itself (so a string
// cannot end with a backslash). Identifiers, numbers and operators are
// ASCII; strings may hold any bytes.
//
// The null, true and false keywords (in any letter case) and the date
// macros are identifiers; Compile gives them their meaning.
//
// Parse is strict where PocketBase is lax. Each of these is a
// *SyntaxError with the byte offset of the problem and what was expected:
// unbalanced parentheses, "()", a dangling operator or join ("a =",
// "a = 1 &&"), input that is empty, whitespace or only a comment, two
// operands or groups with no join between them ("a (b = 1)",
// "(a = 1)(b = 2)", which PocketBase silently accepts), invalid sign or
// join runs ("==", "=!", "<>", "&", "|", "|||"), a lone "/", invalid numbers
// (".5", "5.", "1e3", "0x10", "-"), unterminated strings, non-ASCII
// characters outside strings, and function calls ("name(", which
// PocketBase supports for geoDistance only). Limits: MaxLength bytes of
// source, MaxComparisons comparisons and MaxDepth levels of parentheses.
// Compile reports unknown identifiers, again at their offset.
//
// # Operands
//
// An identifier is resolved by Compile, in this order:
//
//  1. a date macro (exact name, case-sensitive), computed once per Compile
//     from Options.Now in UTC: @now, @yesterday and @tomorrow (now ∓ one
//     day), @todayStart, @todayEnd, @monthStart, @monthEnd, @yearStart,
//     @yearEnd (first and last millisecond of the period), all strings in
//     the stored date format "YYYY-MM-DD HH:MM:SS.mmmZ"; and the numbers
//     @second, @minute, @hour, @day, @month (1-12), @weekday (0 = Sunday)
//     and @year;
//  2. a field the Resolver knows;
//  3. the keywords null, true (the number 1) and false (the number 0), in
//     any case: a field of the same name wins over the keyword;
//  4. otherwise an "unknown field" error.
//
// With Options.ParamMacros the Resolver is asked before the macros, so
// that it can bind them per evaluation. A field marked Param (a value
// bound per evaluation, such as a request's) compares as the constant it
// holds would, not as a column. A field with a Guard takes part in a
// comparison only where the guard holds: for any other entry every
// comparison naming it is false, whatever its operator.
//
// Numbers are float64 values. Booleans everywhere are the numbers 1 and 0,
// as SQLite's JSON_EXTRACT returns them.
//
// # Comparison semantics
//
// PocketBase compiles filters to SQLite SQL; this package evaluates them
// in memory with the same results. Operands are either columns (Field.JSON
// false: typed, with SQLite type affinity), JSON attributes (Field.JSON
// true: typed by their value, no affinity, strict about NULL) or constants
// (literals, keywords and macros: no affinity). "NULL" is a missing value.
//
//	Operator           Operands                          Result
//	=, !=              a JSON attribute on either side   IS / IS NOT: null matches
//	                                                     only missing or JSON null,
//	                                                     "" only the empty string;
//	                                                     x != 5 is true when x is
//	                                                     missing
//	=, !=              column vs null or ""              "NULL or empty" / "neither"
//	                                                     (= null and = "" are the
//	                                                     same test)
//	=, !=              column vs any other constant      = (NULL fails) / IS NOT
//	                                                     (NULL passes)
//	=, !=              column vs column                  COALESCE(a,'') = / !=
//	                                                     COALESCE(b,''), no affinity
//	=, !=              constant vs constant              null and "" equal each
//	                                                     other; otherwise as values
//	< <= > >=          any                               false when either side is
//	                                                     NULL; otherwise ordered
//	~, !~              left NULL or pattern NULL         false (for both ~ and !~)
//	~, !~              constant pattern                  see LIKE below
//	~, !~              field pattern                     LIKE '%' || value || '%'
//	?op                an array value on a side          true if some element (some
//	                                                     pair of elements) satisfies
//	                                                     op; an empty array: false
//	?op                no array value                    the same as op
//
// Ordering and equality compare like SQLite: every number sorts before
// every string; numbers compare by value and strings byte by byte (dates
// are strings "YYYY-MM-DD HH:MM:SS.mmmZ", so they compare as such). Arrays
// and objects, outside the any-of operators, compare as their compact JSON
// text. Before comparing, a column's affinity converts the other side: a
// TypeNumber column turns numeric-looking text into a number (level = "0"
// matches level 0), and a TypeString column turns a number into its
// shortest decimal text (message = 5 matches "5"). JSON attributes and
// constants have no affinity, so the JSON number 204 never equals the
// string "204".
//
// LIKE: the left side is taken as text (a number as its shortest decimal
// text). A constant pattern (a string, or a number as text) without an
// unescaped '%' means "contains": it is matched literally, where a
// backslash before '\', '%' or '_' stands for that character. A constant
// with an unescaped '%' is a LIKE pattern: '%' matches any run of
// characters, '_' one character, and a backslash makes the next character
// literal. Matching ignores ASCII case only, as SQLite's LIKE does. A field
// on the right is used raw between two '%'.
//
// # Sort and fields
//
// ParseSort and ParseFields parse the sort and fields parameters; see their
// documentation. Excerpt implements the :excerpt modifier of fields.
package filterlang
