import { defineRouter, type Router } from '../kernel/router.js';
import { EVENTS_PREFIX, TICKET_TTL_SECONDS } from './constants.js';
import { TicketOut } from './schemas.js';
import type { TicketStore } from './tickets.js';

/** The ticket route of SPEC "Event routes" (router name `events` for `disable_core_routers`). */
export function createEventsRouter(tickets: TicketStore): Router {
  const events = defineRouter({ prefix: EVENTS_PREFIX, name: 'events', tags: ['events'] });
  events.post(
    '/ticket',
    {
      summary: 'Issue a one-time WebSocket ticket',
      description: 'Open `/core/events/ws?ticket=<ticket>` within 30 seconds; a ticket is valid once.',
      response: TicketOut,
      envelope: false, // SPEC "Event routes": not enveloped
      // docs/sessions-and-tokens.md: a socket acts with the whole account (its audience, the superuser
      // snapshot) and outlives the request, so a personal token, which may carry less, gets no ticket.
      allowPersonalToken: false,
      allowImpersonation: true, // SPEC-3 §4: the impersonator sees what the user sees
    },
    async (ctx): Promise<TicketOut> => {
      return { ticket: await tickets.issue(ctx.user.id, ctx.user.sessionId), expires_in: TICKET_TTL_SECONDS };
    },
  );
  return events;
}
