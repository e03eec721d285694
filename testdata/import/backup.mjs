// Makes a backup archive on the PocketBase seed.mjs filled, through its
// API (POST /api/backups), and downloads it with a file token to
// plan.backupPath, for TestImportPocketBase (import_pocketbase_test.go):
//
//	IMPORT_PLAN=plan.json SDK_MODULE=…/pocketbase.es.mjs node backup.mjs BASE_URL
import { writeFileSync } from 'node:fs';
import { plan, step, superusers, assert } from './lib.mjs';

const base = process.argv[2];

await step('backup archive', async () => {
  const su = await superusers(base);
  assert(await su.backups.create(plan.backupKey) === true, 'create');
  const token = await su.files.getToken();
  const res = await fetch(su.backups.getDownloadURL(token, plan.backupKey));
  assert(res.status === 200, `download answered ${res.status}`);
  writeFileSync(plan.backupPath, new Uint8Array(await res.arrayBuffer()));
});
