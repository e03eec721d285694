-- wrk script: password login with IDENTITY and PASSWORD from the environment.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = string.format('{"identity":"%s","password":"%s"}', os.getenv("IDENTITY"), os.getenv("PASSWORD"))
