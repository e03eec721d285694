// Command strongbox serves an application backend's backups, request logs
// and record authentication over an HTTP JSON API compatible with
// PocketBase v0.31, and runs the black-box conformance suite against any
// such server.
//
//	strongbox serve [--http 127.0.0.1:8090] [--dir ./sb_data]
//	strongbox superuser upsert|create|update|delete EMAIL [PASSWORD] [--dir ./sb_data]
//	strongbox conformance [--url URL --email E --password P] [--only PREFIX]
//	strongbox logs seed [--n 1000000] [--dir ./sb_data]
//	strongbox version
package main
