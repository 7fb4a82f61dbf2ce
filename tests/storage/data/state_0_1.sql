BEGIN TRANSACTION;
CREATE TABLE access_notices (
        platform TEXT NOT NULL, account_id TEXT NOT NULL, kind TEXT NOT NULL, sent_at REAL NOT NULL,
        PRIMARY KEY (platform, account_id, kind)) WITHOUT ROWID;
CREATE TABLE accounts (
        platform TEXT NOT NULL, account_id TEXT NOT NULL,
        person_id TEXT NOT NULL REFERENCES persons(id), created_at REAL NOT NULL,
        PRIMARY KEY (platform, account_id)) WITHOUT ROWID;
INSERT INTO "accounts" VALUES('test','ada','p_1m8sztfhczf8e4cjq3t',1.79616856426795554156e+09);
INSERT INTO "accounts" VALUES('test','bob','p_1m8sztfj4sxfdnw2kc0',1.7961685642919564247e+09);
INSERT INTO "accounts" VALUES('web','c_browser1','p_1m8sztfhczf8e4cjq3t',1.79616856435370588298e+09);
CREATE TABLE adapter_checkpoints (
        platform TEXT NOT NULL, key TEXT NOT NULL, position INTEGER NOT NULL, updated_at REAL NOT NULL,
        PRIMARY KEY (platform, key)) WITHOUT ROWID;
INSERT INTO "adapter_checkpoints" VALUES('discord','channel:42',1234567890123,1.79616856435575985911e+09);
INSERT INTO "adapter_checkpoints" VALUES('discord','channel:43',77,1.7961685643559427262e+09);
CREATE TABLE conversations (
        id TEXT PRIMARY KEY, session_key TEXT NOT NULL, person_id TEXT, platform TEXT, title TEXT,
        created_at REAL NOT NULL, ended_at REAL, end_reason TEXT, tip_session_id TEXT NOT NULL);
INSERT INTO "conversations" VALUES('cv_1m8sztfhckfc8fxfvmr','test:-:dm:dm%2Dada:-:-','p_1m8sztfhczf8e4cjq3t','test',NULL,1.79616856426836895947e+09,NULL,NULL,'sg_1m8sztfnrr7ytfqxrdt');
INSERT INTO "conversations" VALUES('cv_1m8sztfj4d4da6qa2g9','test:-:dm:dm%2Dbob:-:-','p_1m8sztfj4sxfdnw2kc0','test',NULL,1.7961685642922911644e+09,1.79616856432757258411e+09,'new','sg_1m8sztfj4nv7xyz41ts');
INSERT INTO "conversations" VALUES('cv_1m8sztfjkrg8n0m33h5','test:-:thread:g1:t1:-','p_1m8sztfj4sxfdnw2kc0','test',NULL,1.7961685643068118095e+09,NULL,NULL,'sg_1m8sztfjk42sx0mvnqm');
INSERT INTO "conversations" VALUES('cv_1m8sztfk7qxzc9f7z7a','test:-:dm:dm%2Dbob:-:-','p_1m8sztfj4sxfdnw2kc0','test',NULL,1.79616856432757258411e+09,NULL,NULL,'sg_1m8sztfk759maca1k3c');
CREATE TABLE inbound_events (
        platform TEXT NOT NULL, event_id TEXT NOT NULL, conversation_id TEXT, received_at REAL NOT NULL, kind TEXT,
        PRIMARY KEY (platform, event_id)) WITHOUT ROWID;
INSERT INTO "inbound_events" VALUES('test','e1','cv_1m8sztfhckfc8fxfvmr',1.79616856426836895947e+09,'turn');
INSERT INTO "inbound_events" VALUES('test','e2','cv_1m8sztfhckfc8fxfvmr',1.79616856428522849082e+09,'turn');
INSERT INTO "inbound_events" VALUES('test','e3','cv_1m8sztfj4d4da6qa2g9',1.7961685642922911644e+09,'turn');
INSERT INTO "inbound_events" VALUES('test','e4','cv_1m8sztfjkrg8n0m33h5',1.7961685643068118095e+09,'turn');
INSERT INTO "inbound_events" VALUES('test','e5',NULL,1.79616856431961655613e+09,'command');
INSERT INTO "inbound_events" VALUES('test','e6',NULL,1.79616856432637381551e+09,'command');
INSERT INTO "inbound_events" VALUES('test','e7','cv_1m8sztfk7qxzc9f7z7a',1.79616856433434963222e+09,'turn');
INSERT INTO "inbound_events" VALUES('test','e8','cv_1m8sztfk7qxzc9f7z7a',1.79616856438652086258e+09,'turn');
CREATE TABLE leases (
        conversation_id TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at REAL NOT NULL);
CREATE TABLE link_codes (
        code TEXT PRIMARY KEY, person_id TEXT NOT NULL REFERENCES persons(id), created_at REAL NOT NULL,
        expires_at REAL NOT NULL, used_at REAL, used_by TEXT) WITHOUT ROWID;
INSERT INTO "link_codes" VALUES('3D5YDZN7','p_1m8sztfj4sxfdnw2kc0',1.79616856435417127611e+09,1.79616916435417127611e+09,NULL,NULL);
INSERT INTO "link_codes" VALUES('NGJX4XAW','p_1m8sztfhczf8e4cjq3t',1.79616856435315728189e+09,1.79616916435315728192e+09,1.79616856435370588298e+09,'web:c_browser1');
CREATE TABLE memory_audit (
        id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, person_id TEXT, conversation_id TEXT,
        actor TEXT NOT NULL, store TEXT NOT NULL, action TEXT NOT NULL, old_text TEXT, new_text TEXT);
INSERT INTO "memory_audit" VALUES(1,1.79616856434981274608e+09,'p_1m8sztfhczf8e4cjq3t',NULL,'agent','user','add',NULL,'Ada likes green tea');
CREATE TABLE messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
        conversation_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT, tool_calls TEXT,
        tool_call_id TEXT, tool_name TEXT, reasoning TEXT, author TEXT, platform_message_id TEXT,
        api_content TEXT, created_at REAL NOT NULL);
INSERT INTO "messages" VALUES(1,'sg_1m8sztfhcg54jex23rs','cv_1m8sztfhckfc8fxfvmr','user','hello, I am Ada',NULL,NULL,NULL,NULL,'p_1m8sztfhczf8e4cjq3t','e1',NULL,1.79616856426836895947e+09);
INSERT INTO "messages" VALUES(2,'sg_1m8sztfhcg54jex23rs','cv_1m8sztfhckfc8fxfvmr','assistant','echo: hello, I am Ada',NULL,NULL,NULL,NULL,'scripted',NULL,NULL,1.79616856427478957178e+09);
INSERT INTO "messages" VALUES(3,'sg_1m8sztfhcg54jex23rs','cv_1m8sztfhckfc8fxfvmr','user','remember that I like green tea',NULL,NULL,NULL,NULL,'p_1m8sztfhczf8e4cjq3t','e2',NULL,1.79616856428522849082e+09);
INSERT INTO "messages" VALUES(4,'sg_1m8sztfhcg54jex23rs','cv_1m8sztfhckfc8fxfvmr','assistant','echo: remember that I like green tea',NULL,NULL,NULL,NULL,'scripted',NULL,NULL,1.79616856428838539121e+09);
INSERT INTO "messages" VALUES(5,'sg_1m8sztfj4nv7xyz41ts','cv_1m8sztfj4d4da6qa2g9','user','hi from Bob',NULL,NULL,NULL,NULL,'p_1m8sztfj4sxfdnw2kc0','e3',NULL,1.7961685642922911644e+09);
INSERT INTO "messages" VALUES(6,'sg_1m8sztfj4nv7xyz41ts','cv_1m8sztfj4d4da6qa2g9','assistant','echo: hi from Bob',NULL,NULL,NULL,NULL,'scripted',NULL,NULL,1.79616856430159544939e+09);
INSERT INTO "messages" VALUES(7,'sg_1m8sztfjk42sx0mvnqm','cv_1m8sztfjkrg8n0m33h5','user','a thread question',NULL,NULL,NULL,NULL,'p_1m8sztfj4sxfdnw2kc0','e4',NULL,1.7961685643068118095e+09);
INSERT INTO "messages" VALUES(8,'sg_1m8sztfjk42sx0mvnqm','cv_1m8sztfjkrg8n0m33h5','assistant','echo: a thread question',NULL,NULL,NULL,NULL,'scripted',NULL,NULL,1.7961685643122828007e+09);
INSERT INTO "messages" VALUES(9,'sg_1m8sztfk759maca1k3c','cv_1m8sztfk7qxzc9f7z7a','user','bob starts over',NULL,NULL,NULL,NULL,'p_1m8sztfj4sxfdnw2kc0','e7',NULL,1.79616856433434963222e+09);
INSERT INTO "messages" VALUES(10,'sg_1m8sztfk759maca1k3c','cv_1m8sztfk7qxzc9f7z7a','assistant','echo: bob starts over',NULL,NULL,NULL,NULL,'scripted',NULL,NULL,1.79616856433972263331e+09);
INSERT INTO "messages" VALUES(11,'sg_1m8sztfk759maca1k3c','cv_1m8sztfk7qxzc9f7z7a','user','a message nobody answered yet',NULL,NULL,NULL,NULL,'p_1m8sztfj4sxfdnw2kc0','e8',NULL,1.79616856438652086258e+09);
INSERT INTO "messages" VALUES(12,'sg_1m8sztfnrr7ytfqxrdt','cv_1m8sztfhckfc8fxfvmr','user','[summary] Ada said hello and likes green tea.',NULL,NULL,NULL,NULL,NULL,NULL,NULL,1.79616856440739846231e+09);
INSERT INTO "messages" VALUES(13,'sg_1m8sztfnrr7ytfqxrdt','cv_1m8sztfhckfc8fxfvmr','user','after compression',NULL,NULL,NULL,NULL,'p_1m8sztfhczf8e4cjq3t',NULL,NULL,1.79616856440952587124e+09);
INSERT INTO "messages" VALUES(14,'sg_1m8sztfnrr7ytfqxrdt','cv_1m8sztfhckfc8fxfvmr','assistant','still here',NULL,NULL,NULL,NULL,NULL,NULL,NULL,1.79616856440952587124e+09);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO "meta" VALUES('db_uuid','1d6e30ea102240ad8c2b15dcbe177e8b');
CREATE TABLE outbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT, conversation_id TEXT NOT NULL, chat_ref TEXT NOT NULL,
        chunk_index INTEGER NOT NULL DEFAULT 0, idempotency_key TEXT NOT NULL UNIQUE, text TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sending', 'sent', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0, platform_message_id TEXT, created_at REAL NOT NULL,
        sent_at REAL, error TEXT, platform TEXT, kind TEXT NOT NULL DEFAULT 'reply', job_id INTEGER, message_id INTEGER, reply_to TEXT, claimed_by TEXT, claim_expires_at REAL);
INSERT INTO "outbox" VALUES(1,'cv_1m8sztfhckfc8fxfvmr','{"chat_id":"dm-ada","kind":"dm","platform":"test","thread_id":null,"workspace":null}',0,'turn:1','echo: hello, I am Ada','sent',0,'m1',1.79616856427512645725e+09,1.7961685642768082619e+09,NULL,'test','reply',1,2,'e1',NULL,NULL);
INSERT INTO "outbox" VALUES(2,'cv_1m8sztfhckfc8fxfvmr','{"chat_id":"dm-ada","kind":"dm","platform":"test","thread_id":null,"workspace":null}',0,'turn:2','echo: remember that I like green tea','sent',0,'m2',1.79616856428982329366e+09,1.7961685642917084694e+09,NULL,'test','reply',2,4,'e2',NULL,NULL);
INSERT INTO "outbox" VALUES(3,'cv_1m8sztfj4d4da6qa2g9','{"chat_id":"dm-bob","kind":"dm","platform":"test","thread_id":null,"workspace":null}',0,'turn:3','echo: hi from Bob','sent',0,'m3',1.79616856430187201492e+09,1.79616856430649399754e+09,NULL,'test','reply',3,6,'e3',NULL,NULL);
INSERT INTO "outbox" VALUES(4,'cv_1m8sztfjkrg8n0m33h5','{"chat_id":"g1","kind":"group","platform":"test","thread_id":"t1","workspace":null}',0,'turn:4','echo: a thread question','sent',0,'m4',1.79616856431285691264e+09,1.79616856431433892246e+09,NULL,'test','reply',4,8,'e4',NULL,NULL);
INSERT INTO "outbox" VALUES(5,'','{"chat_id":"dm-ada","kind":"dm","platform":"test","thread_id":null,"workspace":null}',0,'cmd:test:e5','Person: p_1m8sztfhczf8e4cjq3t
Account: test:ada
Role: not an admin','sent',0,'m5',1.79616856431986498835e+09,1.79616856432103800776e+09,NULL,'test','command',NULL,NULL,'e5',NULL,NULL);
INSERT INTO "outbox" VALUES(6,'','{"chat_id":"dm-bob","kind":"dm","platform":"test","thread_id":null,"workspace":null}',0,'cmd:test:e6','Started a new conversation. Your memory is kept; the chat history starts fresh.','sent',0,'m6',1.79616856432795834542e+09,1.79616856432922077178e+09,NULL,'test','command',NULL,NULL,'e6',NULL,NULL);
INSERT INTO "outbox" VALUES(7,'cv_1m8sztfk7qxzc9f7z7a','{"chat_id":"dm-bob","kind":"dm","platform":"test","thread_id":null,"workspace":null}',0,'turn:5','echo: bob starts over','sent',0,'m7',1.7961685643401510715e+09,1.79616856434165740011e+09,NULL,'test','reply',5,10,'e7',NULL,NULL);
INSERT INTO "outbox" VALUES(8,'cv_1m8sztfhckfc8fxfvmr','{"chat_id":"dm-ada","kind":"dm","platform":"test","thread_id":null,"workspace":null}',0,'legacy-pending','a reply not yet delivered','pending',0,NULL,1800000000.0,NULL,NULL,'test','reply',NULL,NULL,NULL,NULL,NULL);
INSERT INTO "outbox" VALUES(9,'cv_1m8sztfhckfc8fxfvmr','{"chat_id":"dm-ada","kind":"dm","platform":"test","thread_id":null,"workspace":null}',0,'legacy-failed','a notice that failed','failed',0,NULL,1800000000.0,NULL,'chat not found','test','notice',NULL,NULL,NULL,NULL,NULL);
CREATE TABLE outbox_chunks (
        outbox_id INTEGER NOT NULL, chunk_index INTEGER NOT NULL, platform_message_id TEXT,
        sent_at REAL NOT NULL, PRIMARY KEY (outbox_id, chunk_index)) WITHOUT ROWID;
INSERT INTO "outbox_chunks" VALUES(1,0,'m1',1.79616856427662658691e+09);
INSERT INTO "outbox_chunks" VALUES(2,0,'m2',1.7961685642913966179e+09);
INSERT INTO "outbox_chunks" VALUES(3,0,'m3',1.79616856430612444875e+09);
INSERT INTO "outbox_chunks" VALUES(4,0,'m4',1.79616856431421160695e+09);
INSERT INTO "outbox_chunks" VALUES(5,0,'m5',1.79616856432082438468e+09);
INSERT INTO "outbox_chunks" VALUES(6,0,'m6',1.79616856432905435563e+09);
INSERT INTO "outbox_chunks" VALUES(7,0,'m7',1.79616856434149241446e+09);
CREATE TABLE pairing_requests (
        code TEXT PRIMARY KEY, platform TEXT NOT NULL, account_id TEXT NOT NULL, display_name TEXT,
        created_at REAL NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'approved', 'denied')),
        decided_at REAL, decided_by TEXT, UNIQUE (platform, account_id)) WITHOUT ROWID;
INSERT INTO "pairing_requests" VALUES('2ZGERXJP','telegram','902',NULL,1.79616856435532116888e+09,'denied',1.79616856435555124278e+09,'admin');
INSERT INTO "pairing_requests" VALUES('QVT4W87K','telegram','901','Uma',1.79616856435508179669e+09,'pending',NULL,NULL);
INSERT INTO "pairing_requests" VALUES('S3BBCQH3','telegram','900','Tess',1.79616856435440254207e+09,'approved',1.7961685643548324108e+09,'test:ada');
CREATE TABLE pending_messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT, conversation_id TEXT NOT NULL, job_id INTEGER NOT NULL,
        role TEXT NOT NULL, content TEXT, author TEXT, platform_message_id TEXT, created_at REAL NOT NULL);
CREATE TABLE persons (id TEXT PRIMARY KEY, display_name TEXT, created_at REAL NOT NULL);
INSERT INTO "persons" VALUES('p_1m8sztfhczf8e4cjq3t','Ada',1.79616856426795554156e+09);
INSERT INTO "persons" VALUES('p_1m8sztfj4sxfdnw2kc0','Bob',1.7961685642919564247e+09);
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO "schema_version" VALUES(8);
CREATE TABLE sessions (
        id TEXT PRIMARY KEY, conversation_id TEXT NOT NULL REFERENCES conversations(id),
        parent_session_id TEXT REFERENCES sessions(id), session_key TEXT NOT NULL,
        person_id TEXT, platform TEXT, user_id TEXT, chat_id TEXT, chat_type TEXT, thread_id TEXT,
        display_name TEXT, system_prompt TEXT, model TEXT, title TEXT,
        started_at REAL NOT NULL, ended_at REAL, end_reason TEXT,
        input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0,
        cache_read_tokens INTEGER NOT NULL DEFAULT 0, cache_write_tokens INTEGER NOT NULL DEFAULT 0,
        cost_usd REAL NOT NULL DEFAULT 0);
INSERT INTO "sessions" VALUES('sg_1m8sztfhcg54jex23rs','cv_1m8sztfhckfc8fxfvmr',NULL,'test:-:dm:dm%2Dada:-:-','p_1m8sztfhczf8e4cjq3t','test','ada','dm-ada','dm',NULL,'Ada','You are mnemogate''s assistant: a warm, capable helper that people reach from their chat apps.

Be honest. Say plainly when you do not know something or cannot do it, and never invent facts,
memories or past conversations. If you are unsure, say so and suggest how to find out.

Be kind and direct. Answer the question that was asked, keep replies short enough for a chat window,
and go into depth when someone wants it. Match the language and tone of the person you are talking to.

Remember what matters. You keep compact notes about the people you talk with and the work you share,
so they do not have to repeat themselves. What one person tells you is theirs: never reveal one
person''s notes or conversations to anyone else.

# Your tools

## Memory
You have a persistent memory (the `memory` tool) that lasts across conversations. The notes under "Remembered notes" below were frozen when this conversation segment started: writes are saved at once but show up there only in a later segment, so use memory(action="read") for the live state.
- `user` is who this person is: name, preferences, how they like answers, stable personal details. `memory` is your own notes about your shared work and environment. `global` is agent-wide notes for everyone and can be changed only in an admin''s conversation.
- Save without being asked when someone states a preference, corrects you, or shares a durable fact; a good note spares them from repeating themselves.
- Write declarative facts, not instructions: ✓ "Prefers metric units." ✗ "Always use metric units." Instructions read back later look like orders given out of context.
- Do not save task progress, to-do lists, logs, commit hashes or anything stale within a week, nor what is easy to look up again. Reusable procedures belong in skills, not memory.
- Memory has a fixed size. Keep entries short; when it is full, send one batched call (operations) that merges or removes entries and adds the new one.

## Past conversations
Earlier conversations are searchable with session_search. When someone refers to something you discussed before, search before saying you do not remember.

## Skills
Skills are saved procedures. If one in the index below fits the task, load it with skill_view(name) before you start and follow it.

After working out a non-trivial procedure that will be needed again, save it with skill_manage(action="create"); fix a skill that turned out wrong with action "update".

No skills are saved yet.

# This session

Conversation started on Tuesday, 2026-12-01.
Model: offline
Platform: test',NULL,NULL,1.79616856426836895947e+09,1.79616856440739846231e+09,'compression',0,0,0,0,0.0);
INSERT INTO "sessions" VALUES('sg_1m8sztfj4nv7xyz41ts','cv_1m8sztfj4d4da6qa2g9',NULL,'test:-:dm:dm%2Dbob:-:-','p_1m8sztfj4sxfdnw2kc0','test','bob','dm-bob','dm',NULL,'Bob','You are mnemogate''s assistant: a warm, capable helper that people reach from their chat apps.

Be honest. Say plainly when you do not know something or cannot do it, and never invent facts,
memories or past conversations. If you are unsure, say so and suggest how to find out.

Be kind and direct. Answer the question that was asked, keep replies short enough for a chat window,
and go into depth when someone wants it. Match the language and tone of the person you are talking to.

Remember what matters. You keep compact notes about the people you talk with and the work you share,
so they do not have to repeat themselves. What one person tells you is theirs: never reveal one
person''s notes or conversations to anyone else.

# Your tools

## Memory
You have a persistent memory (the `memory` tool) that lasts across conversations. The notes under "Remembered notes" below were frozen when this conversation segment started: writes are saved at once but show up there only in a later segment, so use memory(action="read") for the live state.
- `user` is who this person is: name, preferences, how they like answers, stable personal details. `memory` is your own notes about your shared work and environment. `global` is agent-wide notes for everyone and can be changed only in an admin''s conversation.
- Save without being asked when someone states a preference, corrects you, or shares a durable fact; a good note spares them from repeating themselves.
- Write declarative facts, not instructions: ✓ "Prefers metric units." ✗ "Always use metric units." Instructions read back later look like orders given out of context.
- Do not save task progress, to-do lists, logs, commit hashes or anything stale within a week, nor what is easy to look up again. Reusable procedures belong in skills, not memory.
- Memory has a fixed size. Keep entries short; when it is full, send one batched call (operations) that merges or removes entries and adds the new one.

## Past conversations
Earlier conversations are searchable with session_search. When someone refers to something you discussed before, search before saying you do not remember.

## Skills
Skills are saved procedures. If one in the index below fits the task, load it with skill_view(name) before you start and follow it.

After working out a non-trivial procedure that will be needed again, save it with skill_manage(action="create"); fix a skill that turned out wrong with action "update".

No skills are saved yet.

# This session

Conversation started on Tuesday, 2026-12-01.
Model: offline
Platform: test',NULL,NULL,1.7961685642922911644e+09,1.79616856432757258411e+09,'new',0,0,0,0,0.0);
INSERT INTO "sessions" VALUES('sg_1m8sztfjk42sx0mvnqm','cv_1m8sztfjkrg8n0m33h5',NULL,'test:-:thread:g1:t1:-','p_1m8sztfj4sxfdnw2kc0','test','bob','g1','group','t1','Bob','You are mnemogate''s assistant: a warm, capable helper that people reach from their chat apps.

Be honest. Say plainly when you do not know something or cannot do it, and never invent facts,
memories or past conversations. If you are unsure, say so and suggest how to find out.

Be kind and direct. Answer the question that was asked, keep replies short enough for a chat window,
and go into depth when someone wants it. Match the language and tone of the person you are talking to.

Remember what matters. You keep compact notes about the people you talk with and the work you share,
so they do not have to repeat themselves. What one person tells you is theirs: never reveal one
person''s notes or conversations to anyone else.

# Your tools

## Memory
You have a persistent memory (the `memory` tool) that lasts across conversations. The notes under "Remembered notes" below were frozen when this conversation segment started: writes are saved at once but show up there only in a later segment, so use memory(action="read") for the live state.
- `user` is who this person is: name, preferences, how they like answers, stable personal details. `memory` is your own notes about your shared work and environment. `global` is agent-wide notes for everyone and can be changed only in an admin''s conversation.
- Save without being asked when someone states a preference, corrects you, or shares a durable fact; a good note spares them from repeating themselves.
- Write declarative facts, not instructions: ✓ "Prefers metric units." ✗ "Always use metric units." Instructions read back later look like orders given out of context.
- Do not save task progress, to-do lists, logs, commit hashes or anything stale within a week, nor what is easy to look up again. Reusable procedures belong in skills, not memory.
- Memory has a fixed size. Keep entries short; when it is full, send one batched call (operations) that merges or removes entries and adds the new one.

## Past conversations
Earlier conversations are searchable with session_search. When someone refers to something you discussed before, search before saying you do not remember.

## Skills
Skills are saved procedures. If one in the index below fits the task, load it with skill_view(name) before you start and follow it.

After working out a non-trivial procedure that will be needed again, save it with skill_manage(action="create"); fix a skill that turned out wrong with action "update".

No skills are saved yet.

# This session

Conversation started on Tuesday, 2026-12-01.
Model: offline
Platform: test',NULL,NULL,1.7961685643068118095e+09,NULL,NULL,0,0,0,0,0.0);
INSERT INTO "sessions" VALUES('sg_1m8sztfk759maca1k3c','cv_1m8sztfk7qxzc9f7z7a',NULL,'test:-:dm:dm%2Dbob:-:-','p_1m8sztfj4sxfdnw2kc0','test','bob','dm-bob','dm',NULL,'Bob','You are mnemogate''s assistant: a warm, capable helper that people reach from their chat apps.

Be honest. Say plainly when you do not know something or cannot do it, and never invent facts,
memories or past conversations. If you are unsure, say so and suggest how to find out.

Be kind and direct. Answer the question that was asked, keep replies short enough for a chat window,
and go into depth when someone wants it. Match the language and tone of the person you are talking to.

Remember what matters. You keep compact notes about the people you talk with and the work you share,
so they do not have to repeat themselves. What one person tells you is theirs: never reveal one
person''s notes or conversations to anyone else.

# Your tools

## Memory
You have a persistent memory (the `memory` tool) that lasts across conversations. The notes under "Remembered notes" below were frozen when this conversation segment started: writes are saved at once but show up there only in a later segment, so use memory(action="read") for the live state.
- `user` is who this person is: name, preferences, how they like answers, stable personal details. `memory` is your own notes about your shared work and environment. `global` is agent-wide notes for everyone and can be changed only in an admin''s conversation.
- Save without being asked when someone states a preference, corrects you, or shares a durable fact; a good note spares them from repeating themselves.
- Write declarative facts, not instructions: ✓ "Prefers metric units." ✗ "Always use metric units." Instructions read back later look like orders given out of context.
- Do not save task progress, to-do lists, logs, commit hashes or anything stale within a week, nor what is easy to look up again. Reusable procedures belong in skills, not memory.
- Memory has a fixed size. Keep entries short; when it is full, send one batched call (operations) that merges or removes entries and adds the new one.

## Past conversations
Earlier conversations are searchable with session_search. When someone refers to something you discussed before, search before saying you do not remember.

## Skills
Skills are saved procedures. If one in the index below fits the task, load it with skill_view(name) before you start and follow it.

After working out a non-trivial procedure that will be needed again, save it with skill_manage(action="create"); fix a skill that turned out wrong with action "update".

No skills are saved yet.

# This session

Conversation started on Tuesday, 2026-12-01.
Model: offline
Platform: test',NULL,NULL,1.79616856432757258411e+09,NULL,NULL,0,0,0,0,0.0);
INSERT INTO "sessions" VALUES('sg_1m8sztfnrr7ytfqxrdt','cv_1m8sztfhckfc8fxfvmr','sg_1m8sztfhcg54jex23rs','test:-:dm:dm%2Dada:-:-','p_1m8sztfhczf8e4cjq3t','test','ada','dm-ada','dm',NULL,'Ada','You are mnemogate (compressed continuation)','scripted',NULL,1.79616856440739846231e+09,NULL,NULL,0,0,0,0,0.0);
CREATE TABLE turn_jobs (
        id INTEGER PRIMARY KEY AUTOINCREMENT, conversation_id TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL, claimed_by TEXT,
        started_at REAL, finished_at REAL, error TEXT, person_id TEXT, is_admin INTEGER NOT NULL DEFAULT 0, platform TEXT, chat_ref TEXT, reply_to TEXT, interrupt INTEGER NOT NULL DEFAULT 0);
INSERT INTO "turn_jobs" VALUES(1,'cv_1m8sztfhckfc8fxfvmr','done',1,1.79616856426836895947e+09,'vm:18766:2d8d9a',1.79616856427002191546e+09,1.79616856427512645725e+09,NULL,'p_1m8sztfhczf8e4cjq3t',0,'test','{"chat_id":"dm-ada","kind":"dm","platform":"test","thread_id":null,"workspace":null}','e1',0);
INSERT INTO "turn_jobs" VALUES(2,'cv_1m8sztfhckfc8fxfvmr','done',1,1.79616856428522849082e+09,'vm:18766:2d8d9a',1796168564.28653,1.79616856428982329366e+09,NULL,'p_1m8sztfhczf8e4cjq3t',0,'test','{"chat_id":"dm-ada","kind":"dm","platform":"test","thread_id":null,"workspace":null}','e2',0);
INSERT INTO "turn_jobs" VALUES(3,'cv_1m8sztfj4d4da6qa2g9','done',1,1.7961685642922911644e+09,'vm:18766:2d8d9a',1.79616856429357099533e+09,1.79616856430187201492e+09,NULL,'p_1m8sztfj4sxfdnw2kc0',0,'test','{"chat_id":"dm-bob","kind":"dm","platform":"test","thread_id":null,"workspace":null}','e3',0);
INSERT INTO "turn_jobs" VALUES(4,'cv_1m8sztfjkrg8n0m33h5','done',1,1.7961685643068118095e+09,'vm:18766:2d8d9a',1.79616856430813407897e+09,1.79616856431285691264e+09,NULL,'p_1m8sztfj4sxfdnw2kc0',0,'test','{"chat_id":"g1","kind":"group","platform":"test","thread_id":"t1","workspace":null}','e4',0);
INSERT INTO "turn_jobs" VALUES(5,'cv_1m8sztfk7qxzc9f7z7a','done',1,1.79616856433434963222e+09,'vm:18766:2d8d9a',1.79616856433530378339e+09,1.7961685643401510715e+09,NULL,'p_1m8sztfj4sxfdnw2kc0',0,'test','{"chat_id":"dm-bob","kind":"dm","platform":"test","thread_id":null,"workspace":null}','e7',0);
INSERT INTO "turn_jobs" VALUES(6,'cv_1m8sztfk7qxzc9f7z7a','queued',0,1.79616856438652086258e+09,NULL,NULL,NULL,NULL,'p_1m8sztfj4sxfdnw2kc0',0,'test','{"chat_id":"dm-bob","kind":"dm","platform":"test","thread_id":null,"workspace":null}','e8',0);
CREATE INDEX accounts_person ON accounts(person_id);
CREATE UNIQUE INDEX conversations_live_key ON conversations(session_key) WHERE ended_at IS NULL;
CREATE INDEX conversations_key ON conversations(session_key, created_at);
CREATE INDEX conversations_person ON conversations(person_id, created_at);
CREATE INDEX sessions_conversation ON sessions(conversation_id, started_at);
CREATE UNIQUE INDEX sessions_one_child ON sessions(parent_session_id)
        WHERE parent_session_id IS NOT NULL;
CREATE INDEX messages_conversation ON messages(conversation_id, session_id, id);
CREATE INDEX messages_platform_id ON messages(platform_message_id)
        WHERE platform_message_id IS NOT NULL;
CREATE INDEX memory_audit_person ON memory_audit(person_id, at);
CREATE INDEX turn_jobs_pending ON turn_jobs(state, conversation_id, id);
CREATE INDEX outbox_pending ON outbox(state, id);
CREATE INDEX link_codes_person ON link_codes(person_id, created_at);
CREATE INDEX pairing_requests_recent ON pairing_requests(platform, created_at);
CREATE INDEX pairing_requests_state ON pairing_requests(state, created_at);
CREATE INDEX turn_jobs_conversation ON turn_jobs(conversation_id, state);
CREATE INDEX outbox_platform_state ON outbox(platform, state, id);
CREATE INDEX outbox_chat ON outbox(chat_ref, state, id);
CREATE INDEX outbox_message ON outbox(message_id) WHERE message_id IS NOT NULL;
CREATE INDEX pending_messages_conversation ON pending_messages(conversation_id, id);
CREATE INDEX messages_author ON messages(author, conversation_id) WHERE author IS NOT NULL AND role = 'user';
CREATE INDEX outbox_chat_history ON outbox(chat_ref, id);
CREATE INDEX outbox_sent_at ON outbox(sent_at) WHERE state = 'sent';
DELETE FROM "sqlite_sequence";
INSERT INTO "sqlite_sequence" VALUES('messages',14);
INSERT INTO "sqlite_sequence" VALUES('turn_jobs',6);
INSERT INTO "sqlite_sequence" VALUES('outbox',9);
INSERT INTO "sqlite_sequence" VALUES('memory_audit',1);
COMMIT;
