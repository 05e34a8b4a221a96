/**
 * Locally the console's "user pool" is the sign-in stand-in's store (local/console-users.ts): the
 * console API's CONSOLE_USER_POOL_ID is this prefix and the store's path, so `user invite` from the
 * console writes the file the stand-in signs users in from (admin/user-commands.ts). Its own module:
 * the console API's bundle imports it, and nothing of the local runtime with it.
 */
export const LOCAL_POOL_PREFIX = 'local:';
