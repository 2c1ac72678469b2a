-- The increase a tenant had before the service first saw it in a roll.
--
-- A roll's `last_increase_date` is the CRM's latest: once the service sees the tenant raised
-- again, the field moves to that increase and the one before the tenant's first roll is lost.
-- The stay model learns whether a tenant was raised before, and whether its last increase took
-- effect under 12 months before a notice, from the tenant's earlier increases; without this
-- column the first year of a company's notices all read as first increases, where the
-- decision (which reads the CRM's date) treats the same tenants as raised before.
--
-- Set when the tenant is first seen, to its last increase date if that is before the roll it
-- was first seen in; a tenancy that first shows the field later gets it then; never moved by
-- later rolls of the same tenancy.

ALTER TABLE rent_roll_tenants ADD COLUMN prior_increase_date date;

UPDATE rent_roll_tenants
   SET prior_increase_date = last_increase_date
 WHERE last_increase_date < first_seen_on;
