import { type Kysely, sql } from 'kysely';

/**
 * The database's schema as deterministic text, read from the catalogs: schemas, tables (persistence,
 * columns with types, defaults, identity, generation, column grants), constraints, indexes, triggers,
 * views, functions, comments, grants, default privileges and the recon_* roles. It stands in for
 * `pg_dump --schema-only`, whose client must be at least the server's major version (the machine's
 * pg_dump is older than the embedded server). The owner's name is written <owner>, so that dumps of
 * two servers compare. Kysely's own bookkeeping tables (kysely_*) are left out: they are not the schema.
 */
export async function dumpSchema(db: Kysely<any>): Promise<string> {
  const out: string[] = [];
  const owner = (await sql<{ u: string }>`select current_user as u`.execute(db)).rows[0]!.u;
  const q = async <T>(query: ReturnType<typeof sql<T>>): Promise<T[]> => (await query.execute(db)).rows;
  const acl = (text: string | null) => (text ?? '').split(owner).join('<owner>');

  const schemaFilter = sql`n.nspname not in ('pg_catalog','information_schema','pg_toast') and n.nspname not like 'pg_temp%' and n.nspname not like 'pg_toast_temp%'`;

  for (const r of await q<{ name: string; comment: string | null; grants: string | null }>(sql`
    select n.nspname as name, obj_description(n.oid, 'pg_namespace') as comment,
           (select string_agg(g.grantee::regrole::text || ':' || g.privilege_type, ',' order by 1)
              from aclexplode(n.nspacl) g where g.grantee <> n.nspowner) as grants
    from pg_namespace n where ${schemaFilter} order by 1`)) {
    out.push(`schema ${r.name}`, `  comment ${JSON.stringify(r.comment)}`, `  grants ${acl(r.grants)}`);
  }

  const relations = await q<{
    oid: number;
    name: string;
    kind: string;
    persistence: string;
    comment: string | null;
    grants: string | null;
  }>(sql`
    select c.oid, n.nspname || '.' || c.relname as name, c.relkind as kind, c.relpersistence as persistence,
           obj_description(c.oid, 'pg_class') as comment,
           (select string_agg(case when g.grantee = 0 then 'PUBLIC' else g.grantee::regrole::text end
                              || ':' || g.privilege_type, ',' order by 1)
              from aclexplode(c.relacl) g where g.grantee <> c.relowner) as grants
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where ${schemaFilter} and c.relkind in ('r','p','v','m','S','f') and c.relname not like 'kysely\\_%'
    order by 2`);
  for (const rel of relations) {
    out.push(`relation ${rel.name} kind=${rel.kind} persistence=${rel.persistence}`);
    out.push(`  comment ${JSON.stringify(rel.comment)}`, `  grants ${acl(rel.grants)}`);
    for (const col of await q<{
      name: string;
      type: string;
      notnull: boolean;
      def: string | null;
      identity: string;
      generated: string;
      comment: string | null;
      grants: string | null;
    }>(sql`
      select a.attname as name, format_type(a.atttypid, a.atttypmod) as type, a.attnotnull as notnull,
             pg_get_expr(d.adbin, d.adrelid) as def, a.attidentity as identity, a.attgenerated as generated,
             col_description(a.attrelid, a.attnum) as comment,
             (select string_agg(g.grantee::regrole::text || ':' || g.privilege_type, ',' order by 1)
                from aclexplode(a.attacl) g) as grants
      from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
      where a.attrelid = ${rel.oid} and a.attnum > 0 and not a.attisdropped order by a.attnum`)) {
      out.push(
        `  column ${col.name} ${col.type}${col.notnull ? ' not null' : ''}` +
          `${col.def === null ? '' : ` ${col.generated ? 'generated' : 'default'} ${col.def}`}` +
          `${col.identity ? ` identity=${col.identity}` : ''}`,
        `    comment ${JSON.stringify(col.comment)}`,
      );
      if (col.grants) out.push(`    grants ${acl(col.grants)}`);
    }
    for (const con of await q<{ name: string; def: string; comment: string | null }>(sql`
      select conname as name, pg_get_constraintdef(oid) as def, obj_description(oid, 'pg_constraint') as comment
      from pg_constraint where conrelid = ${rel.oid} order by 1`)) {
      out.push(`  constraint ${con.name} ${con.def}`);
      if (con.comment !== null) out.push(`    comment ${JSON.stringify(con.comment)}`);
    }
    for (const idx of await q<{ def: string; comment: string | null }>(sql`
      select pg_get_indexdef(i.indexrelid) as def, obj_description(i.indexrelid, 'pg_class') as comment
      from pg_index i join pg_class c on c.oid = i.indexrelid where i.indrelid = ${rel.oid} order by c.relname`)) {
      out.push(`  index ${idx.def}`);
      if (idx.comment !== null) out.push(`    comment ${JSON.stringify(idx.comment)}`);
    }
    for (const trg of await q<{ def: string; comment: string | null }>(sql`
      select pg_get_triggerdef(oid) as def, obj_description(oid, 'pg_trigger') as comment
      from pg_trigger where tgrelid = ${rel.oid} and not tgisinternal order by tgname`)) {
      out.push(`  trigger ${trg.def}`);
      if (trg.comment !== null) out.push(`    comment ${JSON.stringify(trg.comment)}`);
    }
    if (rel.kind === 'v' || rel.kind === 'm') {
      const def = (await q<{ def: string }>(sql`select pg_get_viewdef(${rel.oid}::oid, true) as def`))[0]!
        .def;
      out.push(...def.split('\n').map((line) => `  | ${line}`));
    }
  }

  for (const fn of await q<{ def: string; comment: string | null; grants: string | null }>(sql`
    select pg_get_functiondef(p.oid) as def, obj_description(p.oid, 'pg_proc') as comment,
           (select string_agg(case when g.grantee = 0 then 'PUBLIC' else g.grantee::regrole::text end
                              || ':' || g.privilege_type, ',' order by 1)
              from aclexplode(p.proacl) g where g.grantee <> p.proowner) as grants
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where ${schemaFilter}
      and not exists (select from pg_depend d where d.objid = p.oid and d.deptype = 'e')
    order by n.nspname, p.proname, pg_get_function_identity_arguments(p.oid)`)) {
    out.push(
      'function',
      ...fn.def
        .trimEnd()
        .split('\n')
        .map((line) => `  | ${line}`),
    );
    out.push(`  comment ${JSON.stringify(fn.comment)}`, `  grants ${acl(fn.grants)}`);
  }

  for (const d of await q<{ role: string; schema: string | null; type: string; grants: string | null }>(sql`
    select d.defaclrole::regrole::text as role, n.nspname as schema, d.defaclobjtype as type,
           (select string_agg(g.grantee::regrole::text || ':' || g.privilege_type, ',' order by 1)
              from aclexplode(d.defaclacl) g where g.grantee <> d.defaclrole) as grants
    from pg_default_acl d left join pg_namespace n on n.oid = d.defaclnamespace order by 1, 2, 3`)) {
    out.push(`default privileges for ${acl(d.role)} in ${d.schema ?? '*'} on ${d.type}: ${acl(d.grants)}`);
  }

  for (const e of await q<{ name: string }>(sql`select extname as name from pg_extension order by 1`)) {
    out.push(`extension ${e.name}`);
  }
  for (const r of await q<{ name: string; login: boolean }>(sql`
    select rolname as name, rolcanlogin as login from pg_roles where rolname like 'recon\\_%' order by 1`)) {
    out.push(`role ${r.name}${r.login ? ' login' : ' nologin'}`);
  }
  return `${out.join('\n')}\n`;
}
