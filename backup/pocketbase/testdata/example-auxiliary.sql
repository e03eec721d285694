-- The example data dir's logs, after v031-auxiliary.sql.
INSERT INTO _logs VALUES ('log000000000001', 0, 'GET /api/health', '{"method":"GET","status":200,"type":"request","url":"/api/health"}', '2025-01-06 08:00:00.123Z');
