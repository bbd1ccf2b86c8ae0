/**
 * Who receives a project event (SPEC "WebSocket connection"). A file of its own: the router (a route's
 * `ctx.emit`) and the ports (the event sink) both name it, and neither may import the other.
 */
export type Audience =
  | { kind: 'all' }
  | { kind: 'superusers' }
  | { kind: 'users'; userIds: string[] }
  | { kind: 'permission'; codename: string };
