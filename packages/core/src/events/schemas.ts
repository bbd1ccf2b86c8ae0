import { z } from 'zod';

/** `POST /core/events/ticket` (SPEC "Event routes"): not enveloped. */
export const TicketOut = z.object({
  ticket: z.string().describe('One-time credential for `/core/events/ws?ticket=`'),
  expires_in: z.number().int().describe('Seconds the ticket stays valid (30)'),
});
export type TicketOut = z.infer<typeof TicketOut>;
