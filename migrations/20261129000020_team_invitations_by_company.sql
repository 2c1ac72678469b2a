-- The invitation rate limit counts a company's invitations of the last hour, and the team page
-- lists its open ones newest first: both read this index rather than every invitation kept.
CREATE INDEX team_invitations_company_created ON team_invitations (company_id, created_at);
