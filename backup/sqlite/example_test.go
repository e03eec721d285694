package sqlite_test

import (
	"fmt"
	"log"
	"os"

	"strongbox/backup/sqlite"
)

func ExampleOpen() {
	// A table written by sqlite3 before and after ALTER TABLE ADD COLUMN
	// `data` JSON DEFAULT "{}".
	db, err := sqlite.Open("testdata/seed-alter.db")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	tables, err := db.Tables()
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tables {
		fmt.Println(t.Name, len(t.Columns), "columns")
	}
	rows, err := db.Rows("_logs")
	if err != nil {
		log.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		v := rows.Values()
		fmt.Println(rows.RowID(), v[1], v[2], v[3])
	}
	if err := rows.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// _logs 4 columns
	// 1 0 a {}
	// 2 4 b {}
	// 3 8 c {"x":1}
}

func ExampleOpenReaderAt() {
	// A database with two transactions still in its WAL: the reader
	// applies the committed frames, as SQLite does.
	db, err := os.Open("testdata/seed-wal.db")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	wal, err := os.Open("testdata/seed-wal.db-wal")
	if err != nil {
		log.Fatal(err)
	}
	defer wal.Close()
	dbInfo, _ := db.Stat()
	walInfo, _ := wal.Stat()
	r, err := sqlite.OpenReaderAt(db, dbInfo.Size(), wal, walInfo.Size())
	if err != nil {
		log.Fatal(err)
	}
	rows, err := r.Rows("t")
	if err != nil {
		log.Fatal(err)
	}
	for rows.Next() {
		switch v := rows.Values()[1].(type) {
		case string:
			fmt.Println(rows.Values()[0], v)
		case []byte:
			fmt.Println(rows.Values()[0], len(v), "bytes")
		}
	}
	// Output:
	// 1 one
	// 2 700 bytes
	// 3 two
}
