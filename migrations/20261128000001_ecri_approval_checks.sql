-- Approval re-checks every line against the roll, the settings and the increases of the moment it
-- is committed. A line that no longer passes is named (409) or, when the approval asks for it,
-- left out with the guardrail it breaks; the holdout is drawn at approval, after the edits, from a
-- recorded seed and strata.

-- Why a line was left out by the service (not by a person): `guardrail` names the rule, `reason`
-- says it in a sentence. Null for lines kept or left out by hand.
ALTER TABLE ecri_batch_lines ADD COLUMN dropped_guardrail text;
ALTER TABLE ecri_batch_lines ADD COLUMN dropped_reason text;

-- The holdout's draw: the seed it was drawn with and, per stratum (size and rent-to-street band),
-- the eligible and held-out tenants; null before approval or with no holdout.
ALTER TABLE ecri_batches ADD COLUMN holdout_seed bigint;
ALTER TABLE ecri_batches ADD COLUMN holdout_strata jsonb;

-- A control's customer (units of one customer are drawn together) and stratum.
ALTER TABLE ecri_batch_controls ADD COLUMN customer_id text;
ALTER TABLE ecri_batch_controls ADD COLUMN stratum text;

-- The history of increases an approval checks: a tenant's approved lines and controls by facility.
CREATE INDEX ecri_batches_facility_approved ON ecri_batches (facility_id, effective_date)
    WHERE status = 'approved';
CREATE INDEX ecri_batch_controls_tenant ON ecri_batch_controls (tenant_id);
