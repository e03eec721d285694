package sqlite

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// sqlite3Bin returns Debian's sqlite3 CLI, or skips the test.
func sqlite3Bin(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skipf("sqlite3 is not installed (apt-get install sqlite3), which writes the fixtures: %v", err)
	}
	return p
}

// runSQLite runs script with the sqlite3 CLI on db and returns its output.
// The script stops at its first error.
func runSQLite(t testing.TB, db, script string) string {
	t.Helper()
	cmd := exec.Command(sqlite3Bin(t), "-batch", db)
	cmd.Stdin = strings.NewReader(".bail on\n" + script)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sqlite3 %s: %v\n%s", db, err, out)
	}
	return string(out)
}

// sqliteQuery runs one query with the sqlite3 CLI in list mode.
func sqliteQuery(t testing.TB, db, query string) []string {
	t.Helper()
	out, err := exec.Command(sqlite3Bin(t), "-batch", "-list", "-separator", "|", db, query).CombinedOutput()
	if err != nil {
		t.Fatalf("sqlite3 %s %q: %v\n%s", db, query, err, out)
	}
	s := strings.TrimSuffix(string(out), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// quoteIdent quotes a name for SQL.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// sqliteRows returns what sqlite3 reads from a table, one line a row:
// the rowid, then typeof:value of each column in the form render gives.
func sqliteRows(t testing.TB, db, table string) (columns, rows []string) {
	t.Helper()
	columns = sqliteQuery(t, db, fmt.Sprintf("SELECT name FROM pragma_table_xinfo(%s)", "'"+strings.ReplaceAll(table, "'", "''")+"'"))
	exprs := []string{"rowid"}
	for _, c := range columns {
		c = quoteIdent(c)
		exprs = append(exprs, fmt.Sprintf(
			"typeof(%[1]s)||':'||CASE typeof(%[1]s) WHEN 'real' THEN printf('%%!.17g',%[1]s) WHEN 'integer' THEN %[1]s "+
				"WHEN 'text' THEN replace(quote(%[1]s),char(10),'\\n') WHEN 'blob' THEN hex(%[1]s) ELSE '' END", c))
	}
	rows = sqliteQuery(t, db, fmt.Sprintf("SELECT %s FROM %s ORDER BY rowid", strings.Join(exprs, ","), quoteIdent(table)))
	return columns, rows
}

// render gives a row the form sqliteRows gives it. Reals are compared
// through their bits: sqlite3 prints 17 significant digits.
func render(rowid int64, values []any) string {
	parts := []string{strconv.FormatInt(rowid, 10)}
	for _, v := range values {
		switch v := v.(type) {
		case nil:
			parts = append(parts, "null:")
		case int64:
			parts = append(parts, "integer:"+strconv.FormatInt(v, 10))
		case float64:
			if v == 0 {
				v = 0 // sqlite3's printf drops the sign of -0.0
			}
			parts = append(parts, "real:"+strconv.FormatFloat(v, 'g', -1, 64))
		case string:
			parts = append(parts, "text:"+strings.ReplaceAll("'"+strings.ReplaceAll(v, "'", "''")+"'", "\n", `\n`))
		case []byte:
			parts = append(parts, "blob:"+strings.ToUpper(fmt.Sprintf("%x", v)))
		default:
			parts = append(parts, fmt.Sprintf("unknown %T", v))
		}
	}
	return strings.Join(parts, "|")
}

// normalizeReals rewrites sqlite3's 17-digit reals in a row the way
// render writes them (the shortest form that reads back the same bits).
func normalizeReals(row string) string {
	parts := strings.Split(row, "|")
	for i, p := range parts {
		if s, ok := strings.CutPrefix(p, "real:"); ok {
			f, err := strconv.ParseFloat(s, 64)
			if err == nil || math.IsInf(f, 0) {
				parts[i] = "real:" + strconv.FormatFloat(f, 'g', -1, 64)
			}
		}
	}
	return strings.Join(parts, "|")
}

// readAll reads every row of a table with the reader, rendered.
func readAll(t testing.TB, db *DB, table string) []string {
	t.Helper()
	rows, err := db.Rows(table)
	if err != nil {
		t.Fatalf("Rows(%q): %v", table, err)
	}
	defer rows.Close()
	var out []string
	tb, _ := db.Table(table)
	for rows.Next() {
		v := rows.Values()
		if len(v) != len(tb.Columns) {
			t.Fatalf("table %q: %d values for %d columns", table, len(v), len(tb.Columns))
		}
		out = append(out, render(rows.RowID(), v))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("table %q: %v", table, err)
	}
	return out
}

// copyFile copies src to dst (a missing src is no error when optional).
func copyFile(t testing.TB, src, dst string, optional bool) {
	t.Helper()
	b, err := os.ReadFile(src)
	if optional && os.IsNotExist(err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// cli is a running sqlite3 CLI driven through its stdin, for fixtures
// whose files must be copied while a connection is still open.
type cli struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Scanner
	marks int
}

func startCLI(t testing.TB, db string) *cli {
	t.Helper()
	cmd := exec.Command(sqlite3Bin(t), "-batch", db)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &cli{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	t.Cleanup(func() { c.stop(t) })
	return c
}

// do runs SQL and waits until the CLI has run it.
func (c *cli) do(t testing.TB, sql string) {
	t.Helper()
	c.marks++
	mark := fmt.Sprintf("mark-%d", c.marks)
	if _, err := fmt.Fprintf(c.in, "%s\nSELECT '%s';\n", sql, mark); err != nil {
		t.Fatal(err)
	}
	for c.out.Scan() {
		if c.out.Text() == mark {
			return
		}
	}
	t.Fatalf("sqlite3 ended before %s: %v", mark, c.out.Err())
}

// stop ends the CLI (closing its stdin) and waits for it.
func (c *cli) stop(t testing.TB) {
	if c.in == nil {
		return
	}
	c.in.Close()
	c.in = nil
	for c.out.Scan() {
	}
	if err := c.cmd.Wait(); err != nil {
		t.Errorf("sqlite3: %v", err)
	}
}

// fixturePath is a fresh database path in a temporary dir.
func fixturePath(t testing.TB, name string) string {
	return filepath.Join(t.TempDir(), name)
}
