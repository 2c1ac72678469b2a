-- Each facility's overrides of the ECRI engine's settings (guardrails, horizon, notice days,
-- excluded flags, the stay prior): `{}` is the defaults.
ALTER TABLE facilities ADD COLUMN ecri_settings jsonb NOT NULL DEFAULT '{}'::jsonb;
