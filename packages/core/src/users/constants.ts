/** SPEC "User administration": the default order of `GET /admin/user` (newest first). */
export const DEFAULT_USER_ORDER = '-created_at';

/** SPEC "User": email column length (RFC 5321 path limit, as in the core user table). */
export const EMAIL_MAX_LENGTH = 320;

/** SPEC "User": first and last name column length. */
export const NAME_MAX_LENGTH = 150;
