package sqlite

import "testing"

// BenchmarkRows reads the 1,000,000 rows of a 5-column table that sqlite3
// wrote.
func BenchmarkRows(b *testing.B) {
	path := fixturePath(b, "bench.db")
	runSQLite(b, path, `CREATE TABLE t(id INTEGER PRIMARY KEY, email TEXT, score REAL, token BLOB, note TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 1000000)
INSERT INTO t SELECT i, 'user' || i || '@example.com', i * 1.5, randomblob(16), 'a note about row ' || i FROM n;`)
	db, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	b.ResetTimer()
	for b.Loop() {
		rows, err := db.Rows("t")
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for rows.Next() {
			if len(rows.Values()) != 5 {
				b.Fatal("want 5 values")
			}
			n++
		}
		if rows.Err() != nil || n != 1000000 {
			b.Fatalf("%d rows, %v", n, rows.Err())
		}
		b.ReportMetric(float64(n), "rows/op")
	}
}
