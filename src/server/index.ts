// The render service's door for the rest of the repository (the CLI's `svc server` commands):
// its configuration, accounts, credits and passwords, light enough to load with every CLI command.
// Starting the service is start.ts, loaded only when it starts. The lint refuses imports past
// these doors (eslint.config.js).
export { loadConfig, defaultDataDir, type ServerRole } from "./config";
export { addCredits } from "./render/credits";
export { createApiKey, createUser } from "./auth/accounts";
export { findUserByEmail } from "./auth/account-repository";
export { type Database } from "./db/database";
export { checkPasswordStrength, setUserPassword } from "./auth/passwords";
