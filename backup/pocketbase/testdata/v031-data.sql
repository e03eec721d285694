CREATE TABLE _collections (
	id TEXT PRIMARY KEY DEFAULT ('r'||lower(hex(randomblob(7)))) NOT NULL,
	system BOOLEAN DEFAULT FALSE NOT NULL,
	type TEXT DEFAULT "base" NOT NULL,
	name TEXT UNIQUE NOT NULL,
	fields JSON DEFAULT "[]" NOT NULL,
	indexes JSON DEFAULT "[]" NOT NULL,
	listRule TEXT DEFAULT NULL,
	viewRule TEXT DEFAULT NULL,
	createRule TEXT DEFAULT NULL,
	updateRule TEXT DEFAULT NULL,
	deleteRule TEXT DEFAULT NULL,
	options JSON DEFAULT "{}" NOT NULL,
	created TEXT DEFAULT (strftime('%Y-%m-%d %H:%M:%fZ')) NOT NULL,
	updated TEXT DEFAULT (strftime('%Y-%m-%d %H:%M:%fZ')) NOT NULL
);
CREATE TABLE _params (
	id TEXT PRIMARY KEY DEFAULT ('r'||lower(hex(randomblob(7)))) NOT NULL,
	value JSON DEFAULT NULL,
	created TEXT DEFAULT (strftime('%Y-%m-%d %H:%M:%fZ')) NOT NULL,
	updated TEXT DEFAULT (strftime('%Y-%m-%d %H:%M:%fZ')) NOT NULL
);
CREATE TABLE _externalAuths (collectionRef TEXT DEFAULT '' NOT NULL, created TEXT DEFAULT '' NOT NULL, id TEXT PRIMARY KEY DEFAULT ('r'||lower(hex(randomblob(7)))) NOT NULL, provider TEXT DEFAULT '' NOT NULL, providerId TEXT DEFAULT '' NOT NULL, recordRef TEXT DEFAULT '' NOT NULL, updated TEXT DEFAULT '' NOT NULL);
CREATE TABLE _authOrigins (collectionRef TEXT DEFAULT '' NOT NULL, created TEXT DEFAULT '' NOT NULL, fingerprint TEXT DEFAULT '' NOT NULL, id TEXT PRIMARY KEY DEFAULT ('r'||lower(hex(randomblob(7)))) NOT NULL, recordRef TEXT DEFAULT '' NOT NULL, updated TEXT DEFAULT '' NOT NULL);
CREATE TABLE _superusers (created TEXT DEFAULT '' NOT NULL, email TEXT DEFAULT '' NOT NULL, emailVisibility BOOLEAN DEFAULT FALSE NOT NULL, id TEXT PRIMARY KEY DEFAULT ('r'||lower(hex(randomblob(7)))) NOT NULL, password TEXT DEFAULT '' NOT NULL, tokenKey TEXT DEFAULT '' NOT NULL, updated TEXT DEFAULT '' NOT NULL, verified BOOLEAN DEFAULT FALSE NOT NULL);
INSERT INTO _collections (id, system, type, name, fields, options, created, updated)
	VALUES ('pbc_3142635823', 1, 'auth', '_superusers', '[{"id":"f1","name":"email","type":"email"}]', '{"passwordAuth":{"enabled":true}}', '2025-01-02 03:04:05.678Z', '2025-01-02 03:04:05.678Z');
