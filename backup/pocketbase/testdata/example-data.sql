-- The example data dir's records, after v031-data.sql; testdata/pb_data
-- was made with:
--   cat v031-data.sql example-data.sql | sqlite3 pb_data/data.db
--   cat v031-auxiliary.sql example-auxiliary.sql | sqlite3 pb_data/auxiliary.db
INSERT INTO _collections (id, system, type, name, fields, listRule, viewRule, options, created, updated)
	VALUES ('_pb_users_auth_', 0, 'auth', 'users', '[{"id":"text3208210256","name":"id","type":"text","primaryKey":true},{"id":"email3885137012","name":"email","type":"email"},{"id":"bool256245529","name":"verified","type":"bool"},{"id":"text1579384326","name":"name","type":"text","max":255}]', 'id = @request.auth.id', 'id = @request.auth.id', '{"passwordAuth":{"enabled":true,"identityFields":["email"]}}', '2025-01-02 03:04:05.678Z', '2025-01-02 03:04:05.678Z');
CREATE TABLE users (created TEXT DEFAULT '' NOT NULL, email TEXT DEFAULT '' NOT NULL, emailVisibility BOOLEAN DEFAULT FALSE NOT NULL, id TEXT PRIMARY KEY DEFAULT ('r'||lower(hex(randomblob(7)))) NOT NULL, name TEXT DEFAULT '' NOT NULL, password TEXT DEFAULT '' NOT NULL, tokenKey TEXT DEFAULT '' NOT NULL, updated TEXT DEFAULT '' NOT NULL, verified BOOLEAN DEFAULT FALSE NOT NULL);
INSERT INTO users VALUES ('2025-01-03 10:00:00.000Z', 'ann@example.com', 1, 'ann000000000001', 'Ann', '$2a$10$Fo3tYdTjE2RWOoEBDhEnnurcxN3yD8i6N7nwClmCI3nCVCFcg1Spm', 'tk-ann', '2025-01-03 10:00:00.000Z', 1);
INSERT INTO users VALUES ('2025-01-04 11:00:00.000Z', 'bob@example.com', 0, 'bob000000000002', 'Bob', '$2a$10$3aV7kTL8w4cwwN6WlHtNAu3dE0D0Ry3iP0AMpFCCh0XgxA0OcKrO.', 'tk-bob', '2025-01-04 11:00:00.000Z', 0);
INSERT INTO _externalAuths VALUES ('_pb_users_auth_', '2025-01-05 12:00:00.000Z', 'ext000000000001', 'google', '1234567890', 'ann000000000001', '2025-01-05 12:00:00.000Z');
INSERT INTO _params VALUES ('settings', CAST('{"meta":{"appName":"Acme"},"logs":{"maxDays":7}}' AS BLOB), '2025-01-02 03:04:05.678Z', '2025-01-02 03:04:05.678Z');
