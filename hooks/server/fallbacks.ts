/** The end of every KubeCell HTTP app: 404 for an unknown route, 500 as JSON for anything else. */
import type express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { boundMessage, echo } from '../json/echo.js';
import type { Logger } from './logger.js';

export function serveFallbacks(app: express.Express, logger: Logger): void {
  app.use((req, res) => {
    res.status(404).json({ error: `no route for ${echo(req.method)} ${echo(req.path)}` });
  });
  // Anything not handled above: answer 500 as JSON, log it, keep serving.
  app.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    const message = boundMessage(errorMessage(err));
    logger.error('request failed', {
      method: echo(req.method),
      path: echo(req.path),
      error: message,
    });
    res.status(500).json({ error: message });
  });
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}
