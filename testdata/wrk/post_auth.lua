-- wrk script: POST with the Authorization header from the TOKEN environment
-- variable, e.g. for /api/collections/users/auth-refresh.
wrk.method = "POST"
wrk.headers["Authorization"] = os.getenv("TOKEN")
