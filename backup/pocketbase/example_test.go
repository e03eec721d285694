package pocketbase_test

import (
	"fmt"
	"log"

	"strongbox/backup/pocketbase"
)

func ExampleOpen() {
	// A data dir with the system tables of PocketBase v0.31.0, a users
	// collection of two records, an OAuth2 link, settings and a log
	// (testdata/example-*.sql says how it was made).
	d, err := pocketbase.Open("testdata/pb_data", pocketbase.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	cs, err := d.Collections()
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range cs {
		fmt.Println(c.Name, c.Type, len(c.Fields), "fields, created", c.Created.Format("2006-01-02"))
		err := d.Rows(c, func(r pocketbase.Row) error {
			fmt.Printf("  %s %s verified=%d hash=%.4s…\n", r["id"], r["email"], r["verified"], r["password"])
			return nil
		})
		if err != nil {
			log.Fatal(err)
		}
	}
	err = d.ExternalAuths(func(a pocketbase.ExternalAuth) error {
		fmt.Println("OAuth2:", a.RecordRef, a.Provider, a.ProviderID)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	settings, err := d.Settings()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("settings:", string(settings))
	err = d.Logs(func(l pocketbase.Log) error {
		fmt.Println("log:", l.Created.Format("15:04:05.000"), l.Message, string(l.Data))
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// _superusers auth 1 fields, created 2025-01-02
	// users auth 4 fields, created 2025-01-02
	//   ann000000000001 ann@example.com verified=1 hash=$2a$…
	//   bob000000000002 bob@example.com verified=0 hash=$2a$…
	// OAuth2: ann000000000001 google 1234567890
	// settings: {"meta":{"appName":"Acme"},"logs":{"maxDays":7}}
	// log: 08:00:00.123 GET /api/health {"method":"GET","status":200,"type":"request","url":"/api/health"}
}
