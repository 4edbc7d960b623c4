/** What `npm start` (or a deployment) serves beside the app and the widget: the CORS proxy to fall back on. */
export interface AppConfig {
  corsProxy?: string;
}

let appConfig: Promise<AppConfig> | null = null;

/** `config.json`, read once per page; none (or an unreadable one) is an empty config. */
export function loadAppConfig(): Promise<AppConfig> {
  appConfig ??= fetch('config.json')
    .then((r) => (r.ok ? r.json() : {}))
    .catch(() => ({}));
  return appConfig;
}
