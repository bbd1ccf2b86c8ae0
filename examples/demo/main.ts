import { createApp, defineRouter, z } from '@svc/core';

/**
 * The demo project: a small notes API on top of svc's user system.
 * Run it from the repository root with `pnpm demo`.
 */
const notes = defineRouter({ prefix: '/notes', tags: ['notes'], permissions: ['notes.read'] });

const store = new Map<number, { id: number; text: string; archived: boolean }>([
  [1, { id: 1, text: 'Welcome to svc', archived: false }],
]);

notes.get('/', { summary: 'List notes' }, async () => [...store.values()]);

notes.post(
  '/',
  {
    summary: 'Create a note',
    permissions: ['notes.write'],
    body: z.object({ text: z.string().min(1).max(2000) }),
    status: 201,
    logAs: 'note created by {username}',
  },
  async (ctx) => {
    const id = Math.max(0, ...store.keys()) + 1;
    const note = { id, text: ctx.body.text, archived: false };
    store.set(id, note);
    return note;
  },
);

notes.post(
  '/:noteId/archive',
  {
    summary: 'Archive a note',
    permissions: ['notes.write'],
    params: z.object({ noteId: z.coerce.number().int() }),
    logAs: 'archived {noteId} by {username}',
  },
  async (ctx) => {
    const note = store.get(ctx.params.noteId);
    if (note) note.archived = true;
    return { archived: ctx.params.noteId };
  },
);

const open = defineRouter({ prefix: '/open', tags: ['open'] });
open.get('/ping', { public: true, summary: 'Public ping' }, async () => ({ pong: true }));

export const app = createApp({ routers: [notes, open] });
