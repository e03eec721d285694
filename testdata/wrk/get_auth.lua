-- wrk script: GET with the Authorization header from the TOKEN environment variable.
wrk.headers["Authorization"] = os.getenv("TOKEN")
