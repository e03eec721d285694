package filterlang_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"strongbox/filterlang"
)

func ExampleParse() {
	e, err := filterlang.Parse(`level>=4 && (message ~ 'timeout' || data.status >= 500) // errors`)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(e)

	_, err = filterlang.Parse("level = 1 (message = 'x')")
	fmt.Println(err)
	// Output:
	// level >= 4 && (message ~ "timeout" || data.status >= 500)
	// filterlang: offset 10: expected && or ||, found "("
}

// entry is a log entry as a store might hold it in memory.
type entry struct {
	Level   int
	Message string
	Status  int
	Method  string
}

// resolve declares the fields of entry that filters may use.
func resolve(name string) (filterlang.Field[*entry], bool) {
	switch name {
	case "level":
		return filterlang.Field[*entry]{Type: filterlang.TypeNumber,
			Num: func(e *entry) (float64, bool) { return float64(e.Level), true }}, true
	case "message":
		return filterlang.Field[*entry]{Type: filterlang.TypeString,
			Str: func(e *entry) (string, bool) { return e.Message, true }}, true
	case "data.status":
		return filterlang.Field[*entry]{Type: filterlang.TypeNumber, JSON: true,
			Num: func(e *entry) (float64, bool) { return float64(e.Status), e.Status != 0 }}, true
	case "data.method":
		return filterlang.Field[*entry]{Type: filterlang.TypeString, JSON: true,
			Str: func(e *entry) (string, bool) { return e.Method, e.Method != "" }}, true
	}
	return filterlang.Field[*entry]{}, false
}

var entries = []*entry{
	{Level: 0, Message: "GET /api/health", Status: 200, Method: "GET"},
	{Level: 8, Message: "GET /api/files", Status: 404, Method: "GET"},
	{Level: 8, Message: "POST /api/items", Status: 500, Method: "POST"},
	{Level: 4, Message: "cron: backup done"},
}

func ExampleCompile() {

	e, err := filterlang.Parse(`data.status >= 400 && data.method = "GET" || message ~ 'CRON'`)
	if err != nil {
		panic(err)
	}
	match, err := filterlang.Compile(e, resolve, filterlang.Options{})
	if err != nil {
		panic(err)
	}
	for _, x := range entries {
		if match(x) {
			fmt.Println(x.Message)
		}
	}

	e, _ = filterlang.Parse("level > 0 && created > @todayStart")
	_, err = filterlang.Compile(e, resolve, filterlang.Options{Now: func() time.Time { return time.Unix(0, 0) }})
	fmt.Println(err)
	// Output:
	// GET /api/files
	// cron: backup done
	// filterlang: offset 13: unknown field "created"
}

func ExampleCompileSelector() {
	e, err := filterlang.Parse(`data.status >= 400 && data.method = "GET" || message ~ 'CRON'`)
	if err != nil {
		panic(err)
	}
	sel, err := filterlang.CompileSelector(e, resolve, filterlang.Options{})
	if err != nil {
		panic(err)
	}
	// A buffer reused from batch to batch makes selection allocation-free.
	buf := make([]*entry, 0, len(entries))
	for _, x := range sel(buf, entries) {
		fmt.Println(x.Message)
	}
	// Output:
	// GET /api/files
	// cron: backup done
}

func ExampleParseSort() {
	known := func(name string) bool {
		return name == "created" || name == "level" || strings.HasPrefix(name, "data.")
	}
	fields, err := filterlang.ParseSort("-level, created,data.status", known)
	fmt.Println(fields, err)

	_, err = filterlang.ParseSort("created,-nope", known)
	fmt.Println(err)
	// Output:
	// [{level true} {created false} {data.status false}] <nil>
	// filterlang: offset 8: unknown sort field "nope"
}

func ExampleParseFields() {
	f, err := filterlang.ParseFields("id,message:excerpt(12,true),data.status")
	if err != nil {
		panic(err)
	}
	var item any
	_ = json.Unmarshal([]byte(`{"id":"a1","level":8,"message":"<p>Request <b>failed</b> with a timeout</p>",
		"data":{"status":504,"method":"GET"}}`), &item)
	out, _ := json.Marshal(f.Apply(item))
	fmt.Println(string(out))

	_, err = filterlang.ParseFields("message:excerpt(0)")
	fmt.Println(err)
	// Output:
	// {"data":{"status":504},"id":"a1","message":"Request fail..."}
	// filterlang: offset 16: excerpt maxLength "0" is not a positive integer
}

func ExampleExcerpt() {
	fmt.Println(filterlang.Excerpt("<h1>Title</h1><p>Some <i>long</i> text&hellip;</p>", 15, true))
	// Output:
	// Title Some long...
}
